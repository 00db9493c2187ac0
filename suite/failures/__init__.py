"""Failures that outlast a run: the finding record and the findings store.

Below every command package (explore, capture, report, replay, releases, reduce, gate)
and above the engine, whose ``CaseResult`` a finding carries: every command that reads or
writes a finding imports it from here.
"""
