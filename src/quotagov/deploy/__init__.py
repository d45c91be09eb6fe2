"""Deployment tooling: read the SAM template and check what it grants and ships.

- :mod:`quotagov.deploy.template`: :func:`~quotagov.deploy.template.load_template`, a
  YAML reader that understands CloudFormation short-form intrinsics (``!Ref``,
  ``!GetAtt``, ``!Sub``, ...), shared with the local runtime.
- :mod:`quotagov.deploy.checks`: the template checker run by ``make lint-template`` and
  the tests (handler paths import, sample events exist, IAM least privilege).
"""
