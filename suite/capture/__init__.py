"""``repro capture``: from a failure in the user's own program to a reproducer file.

- ``site/``: what runs inside the program (``sitecustomize``, the hook, the record
  types), standard library and triton only;
- :mod:`suite.capture.program`: runs the program with the hook and its stderr logged;
- :mod:`suite.capture.generate`: records to failures and reproducer files;
- :mod:`suite.capture.session`: the command's steps, isolated confirmation, findings.
"""
