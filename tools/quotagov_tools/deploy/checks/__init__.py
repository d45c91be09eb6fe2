"""Checks of the SAM template that ``sam validate --lint`` cannot make.

Run after ``sam build`` on ``.aws-sam/build/template.yaml`` (or on ``template.yaml``)::

    python -m quotagov_tools.deploy.checks [TEMPLATE] [--events DIR]

Five families of rules (docs/architecture.md for the names):

``handler``
    Every ``AWS::Serverless::Function``'s ``Handler`` (``package.module.attribute``)
    imports from the function's code directory (``CodeUri``) and names a callable. Each
    code directory is imported in a fresh interpreter with only the function's own
    environment, so a module that works only because another one was imported first,
    or that sits outside the artifact, is caught.
``event``
    Every function has a sample event ``events/<handler module>[-<variant>].json``
    (for ``sam local invoke -e`` and ``quotagov invoke``), each file is a JSON object of
    the kind of one of the function's triggers (REST proxy, SQS, EventBridge,
    schedule), an API event hits one of the function's routes and an EventBridge event
    matches one of its rule patterns.
``iam``
    Every Allow statement the template writes (function ``Policies``, ``AWS::IAM::*``
    resources) lists its actions and resources explicitly (no ``NotAction``, no
    ``NotResource``, no SAM policy template or managed policy whose content the checker
    cannot see); no action contains ``*``; a resource is ``*`` only for actions without
    resource-level permissions (:data:`NO_RESOURCE_LEVEL_ACTIONS`, from the AWS Service
    Authorization Reference; for Batch its page "Actions, resources, and condition keys
    for AWS Batch"); the append-only tables
    (:data:`APPEND_ONLY_TABLES`) get no update or delete action; and the actions in
    :data:`EXCLUSIVE_ACTIONS` go only to the functions listed there.

``operations``
    Every dead-letter target queue (redrive policies, ``OnFailure`` destinations, event
    ``DeadLetterConfig``) has an alarm on its first visible message, every function
    alarms on ``Errors`` and ``Throttles`` and logs to a log group with retention,
    every API stage writes access logs to one, and there is a dashboard (operators are
    told).

``seal``
    Every queue, table and secret carries a resource policy that refuses every
    principal but the roles the template grants (senders and consumers of a queue,
    writers of a table, readers of a secret), no SQS-triggered function runs as a role
    SAM generates (it would get ``AWSLambdaSQSQueueExecutionRole``), and
    ``batch:TagResource`` is a tag-on-create right only (:mod:`.seals`).

Every rule reports :class:`Finding` values; an empty list means the template passes.
"""

# One module per concern (this docstring is also ``--help``): findings (Finding),
# handlers, sample_events, iam, operations and seals (one rule family each; statements reads
# the IAM statements out of the template), run (check_template, default_template, main).

from quotagov_tools.deploy.checks.findings import Finding
from quotagov_tools.deploy.checks.handlers import check_handlers
from quotagov_tools.deploy.checks.iam import (
    APPEND_ONLY_TABLES,
    EXCLUSIVE_ACTIONS,
    MUTATING_TABLE_ACTIONS,
    NO_RESOURCE_LEVEL_ACTIONS,
    check_iam,
)
from quotagov_tools.deploy.checks.operations import check_operations, dead_letter_queues
from quotagov_tools.deploy.checks.run import check_template, default_template, main
from quotagov_tools.deploy.checks.sample_events import check_events
from quotagov_tools.deploy.checks.seals import check_seals

__all__ = [
    "APPEND_ONLY_TABLES",
    "EXCLUSIVE_ACTIONS",
    "MUTATING_TABLE_ACTIONS",
    "NO_RESOURCE_LEVEL_ACTIONS",
    "Finding",
    "check_events",
    "check_handlers",
    "check_iam",
    "check_operations",
    "check_seals",
    "check_template",
    "dead_letter_queues",
    "default_template",
    "main",
]
