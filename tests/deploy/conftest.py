"""A small SAM project on disk for testing the template checker itself.

``fixture_project`` writes, under ``tmp_path``:

- ``template.yaml``: four functions named like the real ones (so the audit-table and
  UpdateServiceJob rules apply), each with least-privilege inline statements;
- ``code/fakeapp/handlers/*.py``: importable handler modules (``CodeUri: code/``);
- ``events/*.json``: one fitting sample event per function.

The clean project passes every check; tests plant one fault and expect one finding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from quotagov_tools.deploy.template import function_role, parse_template

FIXTURE_TEMPLATE = """
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Conditions:
  CreateQueue: !Equals [a, b]
Globals:
  Function:
    Runtime: python3.11
    CodeUri: code/
    Environment:
      Variables:
        AUDIT_TABLE: !Ref AuditTable
Resources:
  AuditTable:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{AttributeName: pk, KeyType: HASH}, {AttributeName: sk, KeyType: RANGE}]
      ResourcePolicy:
        PolicyDocument:
          Statement:
            - Effect: Deny
              Principal: "*"
              Action: [dynamodb:PutItem]
              Resource: "*"
              Condition:
                ArnNotLike:
                  aws:PrincipalArn:
                    - !Sub "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/quotagov/\
                        ${AWS::Region}/${AWS::StackName}/AuditFunction/*"
            - Effect: Deny
              Principal: "*"
              Action: [dynamodb:UpdateItem, dynamodb:DeleteItem]
              Resource: "*"
            - Effect: Deny
              Principal: "*"
              Action: [dynamodb:BatchWriteItem, dynamodb:PartiQLInsert,
                       dynamodb:PartiQLUpdate, dynamodb:PartiQLDelete]
              Resource: "*"
  JobsTable:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      ResourcePolicy:
        PolicyDocument:
          Statement:
            - Effect: Deny
              Principal: "*"
              Action: [dynamodb:PutItem, dynamodb:UpdateItem, dynamodb:DeleteItem,
                       dynamodb:BatchWriteItem, dynamodb:PartiQLInsert,
                       dynamodb:PartiQLUpdate, dynamodb:PartiQLDelete]
              Resource: "*"
  Dlq:
    Type: AWS::SQS::Queue
  DlqPolicy:
    Type: AWS::SQS::QueuePolicy
    Properties:
      Queues: [!Ref Dlq]
      PolicyDocument:
        Statement:
          - {Effect: Deny, Principal: "*", Action: sqs:SendMessage, Resource: !GetAtt Dlq.Arn}
          - Effect: Deny
            Principal: "*"
            Action: [sqs:ReceiveMessage, sqs:DeleteMessage, sqs:ChangeMessageVisibility,
                     sqs:PurgeQueue, sqs:StartMessageMoveTask, sqs:CancelMessageMoveTask]
            Resource: !GetAtt Dlq.Arn
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy: {deadLetterTargetArn: !GetAtt Dlq.Arn, maxReceiveCount: 5}
  QueuePolicy:
    Type: AWS::SQS::QueuePolicy
    Properties:
      Queues: [!Ref Queue]
      PolicyDocument:
        Statement:
          - {Effect: Deny, Principal: "*", Action: sqs:SendMessage, Resource: !GetAtt Queue.Arn}
          - Effect: Deny
            Principal: "*"
            Action: [sqs:ReceiveMessage, sqs:DeleteMessage, sqs:ChangeMessageVisibility,
                     sqs:PurgeQueue, sqs:StartMessageMoveTask, sqs:CancelMessageMoveTask]
            Resource: !GetAtt Queue.Arn
            Condition:
              ArnNotEquals:
                aws:PrincipalArn: [!GetAtt WorkerFunctionRole.Arn]
  Api:
    Type: AWS::Serverless::Api
    Properties:
      StageName: v1
      AccessLogSetting: {DestinationArn: !GetAtt AccessLogs.Arn, Format: $context.requestId}
  JobsApiFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: fakeapp.handlers.jobs_api.handler
      Environment:
        Variables:
          JOBS_TABLE: !Ref JobsTable
          MODE: strict
      Events:
        Get:
          Type: Api
          Properties: {RestApiId: !Ref Api, Path: "/jobs/{jobId}", Method: GET}
      Policies:
        - Statement:
            - Sid: Jobs
              Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:Query]
              Resource:
                - !GetAtt JobsTable.Arn
                - !Sub ${JobsTable.Arn}/index/byBatchJobId
            - Sid: Describe
              Effect: Allow
              Action: batch:DescribeServiceJob
              Resource: "*"
            - Sid: NoAuditWrites
              Effect: Deny
              Action: "*"
              Resource: "*"
  WorkerFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: fakeapp.handlers.worker.handler
      Role: !GetAtt WorkerFunctionRole.Arn
      Events:
        Messages:
          Type: SQS
          Properties: {Queue: !GetAtt Queue.Arn, BatchSize: 5}
  WorkerFunctionRole:
    Type: AWS::IAM::Role
    Properties:
      Path: !Sub /quotagov/${AWS::Region}/${AWS::StackName}/WorkerFunction/
      Policies:
        - PolicyName: least-privilege
          PolicyDocument:
            Statement:
              - Sid: Submit
                Effect: Allow
                Action: batch:SubmitServiceJob
                Resource:
                  - !If [CreateQueue, !Ref AWS::NoValue, arn:aws:batch:r:1:job-queue/q]
                  - !Sub arn:${AWS::Partition}:batch:${AWS::Region}:${AWS::AccountId}:service-job/*
              - Sid: Poll
                Effect: Allow
                Action: [sqs:ReceiveMessage, sqs:DeleteMessage, sqs:ChangeMessageVisibility]
                Resource: !GetAtt Queue.Arn
  ApplyDecisionsFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: fakeapp.handlers.apply_decisions.handler
      Events:
        Tick:
          Type: Schedule
          Properties: {Schedule: rate(5 minutes)}
      Policies:
        - Statement:
            - Sid: Raise
              Effect: Allow
              Action: batch:UpdateServiceJob
              Resource: !Sub arn:aws:batch:${AWS::Region}:${AWS::AccountId}:service-job/*
  AuditFunction:
    Type: AWS::Serverless::Function
    Properties:
      Handler: fakeapp.handlers.audit_trail.handler
      RolePath: !Sub /quotagov/${AWS::Region}/${AWS::StackName}/AuditFunction/
      Events:
        Calls:
          Type: EventBridgeRule
          Properties:
            Pattern:
              source: [aws.batch]
              detail-type: [AWS API Call via CloudTrail]
              detail:
                eventName: [UpdateQuotaShare, DeleteQuotaShare]
                eventSource: [!Ref EventSource]
      Policies:
        - Statement:
            - Sid: Append
              Effect: Allow
              Action: [dynamodb:PutItem, dynamodb:GetItem, dynamodb:Query]
              Resource: !GetAtt AuditTable.Arn
"""

#: What the ``operations`` rule asks of the fixture's functions and queues.
FIXTURE_FUNCTIONS = tuple(
    name
    for name, resource in parse_template(FIXTURE_TEMPLATE)["Resources"].items()
    if resource.get("Type") == "AWS::Serverless::Function"
)


def _alarm(logical_id: str, namespace: str, metric: str, dimension: str, value: str) -> str:
    return f"""
  {logical_id}:
    Type: AWS::CloudWatch::Alarm
    Properties:
      Namespace: {namespace}
      MetricName: {metric}
      Dimensions: [{{Name: {dimension}, Value: {value}}}]
      Statistic: Sum
      Period: 60
      EvaluationPeriods: 1
      Threshold: 0
      ComparisonOperator: GreaterThanThreshold
      AlarmActions: [!Ref AlarmTopic]
"""


def _operations_yaml() -> str:
    """Alarms, log groups, access logs and a dashboard: what a clean project has."""
    parts = [
        """
  AlarmTopic:
    Type: AWS::SNS::Topic
  Dashboard:
    Type: AWS::CloudWatch::Dashboard
    Properties:
      DashboardBody: "{}"
  AccessLogs:
    Type: AWS::Logs::LogGroup
    Properties:
      RetentionInDays: 30
""",
        _alarm(
            "DlqAlarm",
            "AWS/SQS",
            "ApproximateNumberOfMessagesVisible",
            "QueueName",
            "!GetAtt Dlq.QueueName",
        ),
    ]
    for function in FIXTURE_FUNCTIONS:
        parts.append(
            f"""
  {function}Logs:
    Type: AWS::Logs::LogGroup
    Properties:
      LogGroupName: !Sub /aws/lambda/${{{function}}}
      RetentionInDays: 7
"""
        )
        for metric in ("Errors", "Throttles"):
            parts.append(
                _alarm(
                    f"{function}{metric}", "AWS/Lambda", metric, "FunctionName", f"!Ref {function}"
                )
            )
    return "".join(parts)


HANDLER_SOURCE = "def handler(event, context):\n    return {'module': __name__}\n"

API_EVENT: dict[str, Any] = {
    "resource": "/jobs/{jobId}",
    "path": "/jobs/j-1",
    "httpMethod": "GET",
    "headers": None,
    "pathParameters": {"jobId": "j-1"},
    "requestContext": {"stage": "v1", "identity": {"userArn": "arn:aws:iam::1:user/a"}},
    "body": None,
    "isBase64Encoded": False,
}
SQS_EVENT: dict[str, Any] = {
    "Records": [{"messageId": "m-1", "body": "{}", "eventSource": "aws:sqs"}],
}
SCHEDULE_EVENT: dict[str, Any] = {
    "version": "0",
    "id": "e-1",
    "detail-type": "Scheduled Event",
    "source": "aws.events",
    "detail": {},
}
CLOUDTRAIL_EVENT: dict[str, Any] = {
    "version": "0",
    "id": "e-2",
    "detail-type": "AWS API Call via CloudTrail",
    "source": "aws.batch",
    "detail": {"eventName": "UpdateQuotaShare", "eventSource": "batch.amazonaws.com"},
}


@dataclass
class FixtureProject:
    """Paths of the written project and its template as loaded (mutable by tests)."""

    root: Path
    template: dict[str, Any]

    @property
    def events(self) -> Path:
        return self.root / "events"

    @property
    def handlers(self) -> Path:
        return self.root / "code" / "fakeapp" / "handlers"

    def statements(self, function: str) -> list[Any]:
        """The inline statement list of ``function`` (append to plant a fault): its
        ``Policies``, or its explicit role's first inline policy."""
        resources = self.template["Resources"]
        role = function_role(self.template, function)
        if role in resources:
            document = resources[role]["Properties"]["Policies"][0]["PolicyDocument"]
            role_statements: list[Any] = document["Statement"]
            return role_statements
        policies = resources[function]["Properties"]["Policies"]
        statements: list[Any] = policies[0]["Statement"]
        return statements

    def write_event(self, name: str, event: dict[str, Any]) -> None:
        (self.events / name).write_text(json.dumps(event), encoding="utf-8")


@pytest.fixture
def fixture_project(tmp_path: Path) -> FixtureProject:
    text = FIXTURE_TEMPLATE + _operations_yaml()
    (tmp_path / "template.yaml").write_text(text, encoding="utf-8")
    handlers = tmp_path / "code" / "fakeapp" / "handlers"
    handlers.mkdir(parents=True)
    for package in (handlers.parent, handlers):
        (package / "__init__.py").write_text("", encoding="utf-8")
    for module in ("jobs_api", "worker", "apply_decisions", "audit_trail"):
        (handlers / f"{module}.py").write_text(HANDLER_SOURCE, encoding="utf-8")
    project = FixtureProject(tmp_path, parse_template(text))
    project.events.mkdir()
    project.write_event("jobs_api-get.json", API_EVENT)
    project.write_event("worker.json", SQS_EVENT)
    project.write_event("apply_decisions-tick.json", SCHEDULE_EVENT)
    project.write_event("audit_trail-update-quota-share.json", CLOUDTRAIL_EVENT)
    return project
