"""Searching config space: explore (Hypothesis generation and shrinking) and the findings store."""
