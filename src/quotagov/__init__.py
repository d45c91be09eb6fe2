"""quotagov: a governance layer on top of AWS Batch quota management.

Packages (dependencies point one way: handlers and local -> governance -> policy,
scheduler and ports; adapters implement the ports):

- ``policy``: the governance policy (pydantic models, loading, validation).
- ``scheduler``: the local discrete-event simulator of quota-share scheduling.
- ``governance``: the use cases (routing, escalations, dispositions, audit).
- ``adapters``: one module per outside system (Batch, DynamoDB, SQS, Slack).
- ``handlers``: thin Lambda entry points.
- ``local``: the embedded runtime (moto, simulated Batch, fake Slack).
"""

__version__ = "0.1.0"
