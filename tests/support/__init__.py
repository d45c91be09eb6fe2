"""The shared test harness: fakes, builders and fixtures' building blocks.

Modules here serve more than one test directory; a helper used by one directory only
stays beside its tests (``job_state/envelopes.py``, ``scheduler/builders.py`` ...).

- :mod:`support.aws`: account, region and queue constants, fake credentials.
- :mod:`support.moto_server`: a loopback moto server answering one request at a time.
- :mod:`support.lambda_context`: the Lambda context object handlers are called with.
- :mod:`support.events`: the sample events of ``events/`` and API Gateway requests.
- :mod:`support.payloads`: SageMaker ``CreateTrainingJob`` requests.
- :mod:`support.slack`: Slack request signing, signed clicks, the fake Slack's client.
- :mod:`support.principals`: the callers of the example policy.
- :mod:`support.policies`: the example policy and the simulated Batch it runs on.

Tests import it as ``support`` (``from support.aws import REGION``): ``tests`` is not a
package, so pytest's default ``prepend`` import mode puts ``tests/`` on ``sys.path``
when it loads the root ``tests/conftest.py``, before any test module.
"""
