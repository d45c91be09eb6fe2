"""Reports for operators: who escalates how often, who loses how much work.

- :mod:`.escalations`: per team and requester, requests, approvals, denials and budget
  used; per team, preemptions and lost GPU-hours (``quotagov report escalations``).
- :mod:`.gpus`: GPUs per SageMaker training instance type.
"""
