"""The engine: a reproducer file becomes cases, each case runs isolated, is classified and recorded.

discover -> expand -> runner (isolate / warm + template + child) -> classify + signature
-> triage -> baseline -> record. ``session.run`` drives the whole flow for every command.
"""
