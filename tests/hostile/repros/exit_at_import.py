"""Exits with status 0 while it is imported: CI must not read that as "nothing changed"."""

import os

os._exit(0)
