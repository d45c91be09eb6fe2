"""load_template reads CloudFormation short-form intrinsics into their long form."""

from __future__ import annotations

from pathlib import Path

import pytest

from quotagov_tools.deploy.template import (
    TemplateError,
    function_property,
    load_template,
    parse_template,
    references,
)

ROOT = Path(__file__).resolve().parents[2]


def test_short_forms_become_long_forms() -> None:
    template = parse_template(
        """
Resources:
  T:
    Type: AWS::DynamoDB::Table
    Properties:
      A: !Ref Queue
      B: !GetAtt Queue.Arn
      C: !GetAtt [Queue, Arn]
      D: !Sub ${Queue.Arn}/index/*
      E: !Sub ["${X}/y", {X: !Ref Queue}]
      F: !If [Cond, !Ref AWS::NoValue, "*"]
      G: !Join [":", [a, !Select [0, !Split [",", "b,c"]]]]
      H: !Equals [!Ref P, "true"]
      I: !GetAtt Stack.Outputs.Name
"""
    )
    properties = template["Resources"]["T"]["Properties"]
    assert properties == {
        "A": {"Ref": "Queue"},
        "B": {"Fn::GetAtt": ["Queue", "Arn"]},
        "C": {"Fn::GetAtt": ["Queue", "Arn"]},
        "D": {"Fn::Sub": "${Queue.Arn}/index/*"},
        "E": {"Fn::Sub": ["${X}/y", {"X": {"Ref": "Queue"}}]},
        "F": {"Fn::If": ["Cond", {"Ref": "AWS::NoValue"}, "*"]},
        "G": {"Fn::Join": [":", ["a", {"Fn::Select": [0, {"Fn::Split": [",", "b,c"]}]}]]},
        "H": {"Fn::Equals": [{"Ref": "P"}, "true"]},
        "I": {"Fn::GetAtt": ["Stack", "Outputs.Name"]},
    }
    assert sorted(set(references(properties))) == ["AWS::NoValue", "P", "Queue", "Stack"]
    assert list(references({"Fn::Sub": "arn:${AWS::Partition}:x:${!Literal}:${T.Arn}"})) == [
        "AWS::Partition",
        "T",
    ]


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("Resources: [a, b]", "has no Resources mapping"),
        ("- just\n- a list", "a template must be a mapping, got list"),
        ("Resources: {a: !Ref [}", "not a YAML template"),
        ("Description: nothing", "has no Resources mapping"),
    ],
)
def test_bad_templates_are_rejected_naming_the_fault(text: str, fault: str) -> None:
    with pytest.raises(TemplateError, match=fault) as caught:
        parse_template(text, source="bad.yaml")
    assert str(caught.value).startswith("bad.yaml: ")


def test_missing_file_is_a_template_error(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="cannot read template"):
        load_template(tmp_path / "template.yaml")


def test_the_project_template_loads_with_globals_merged() -> None:
    template = load_template(ROOT / "template.yaml")
    assert template["Transform"] == "AWS::Serverless-2016-10-31"
    assert function_property(template, "SubmitWorkerFunction", "Runtime") == "python3.11"
    assert function_property(template, "SubmitWorkerFunction", "Timeout") == 60
    variables = function_property(template, "SubmitWorkerFunction", "Environment")["Variables"]
    assert variables["POWERTOOLS_SERVICE_NAME"] == "quotagov"
    assert variables["JOBS_TABLE"] == {"Ref": "JobsTable"}
    assert variables["AUDIT_QUEUE_URL"] == {"Ref": "AuditQueue"}
    assert "AUDIT_TABLE" not in variables  # one audit writer
    table = template["Resources"]["JobsTable"]["Properties"]
    assert table["GlobalSecondaryIndexes"][0]["IndexName"] == "byBatchJobId"
