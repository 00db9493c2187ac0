"""Searching config space: explore (Hypothesis generation and shrinking); the findings it
makes are kept by :mod:`suite.failures`."""
