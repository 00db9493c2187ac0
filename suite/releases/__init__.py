"""Across Triton releases: the matrix, bisection and the dashboard."""
