"""Deployment tooling: read the SAM template and check what it grants and ships.

- :mod:`quotagov_tools.deploy.template`: :func:`~quotagov_tools.deploy.template.load_template`, a
  YAML reader that understands CloudFormation short-form intrinsics (``!Ref``,
  ``!GetAtt``, ``!Sub``, ...), shared with the local runtime.
- :mod:`quotagov_tools.deploy.checks`: the template checker (handler paths import, sample
  events exist, IAM least privilege), run by the tests on the built template (``make
  test`` runs ``sam build`` first); a package with one module per rule family, its
  public names re-exported, and ``python -m quotagov_tools.deploy.checks`` as the command
  line.
"""
