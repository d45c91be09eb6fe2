"""Where the running controller gets its policy: SSM Parameter Store in Lambda, a file locally.

* Lambda: the policy YAML is the value of the SSM parameter named by
  ``POLICY_PARAMETER`` (an Advanced-tier String parameter when the document is larger
  than 4 KB). It is read through Powertools Parameters (``SSMProvider``), which caches
  the value for ``max_age`` seconds (default 300, or ``POWERTOOLS_PARAMETERS_MAX_AGE``),
  so a policy change reaches warm functions within that time without a redeploy.
* Locally: ``POLICY_FILE`` names a YAML file, read on every call (cheap, and edits
  show up at once).

The parsed :class:`~quotagov.policy.models.Policy` is memoised by the document's text,
so a cached parameter value is parsed and validated once.

Each source keeps the :class:`PolicyStamp` of the policy it loaded last: the SSM
parameter's ``Version`` (from the ``GetParameter`` response, kept by
:class:`VersionedSSMProvider`; None for a file) and the first 12 hex digits of the
document's SHA-256, so logs, metrics and records can say which policy a function ran.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quotagov.policy.models import Policy
from quotagov.policy.validation import PolicyError, load_policy


@dataclass(frozen=True)
class PolicyStamp:
    """Which policy a source loaded.

    Attributes:
        version: the SSM parameter version (1, 2, ...), None for a file or unknown.
        digest: the first 12 hex digits of the SHA-256 of the document's text.
    """

    version: int | None
    digest: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def versioned_ssm_provider() -> Any:
    """A Powertools ``SSMProvider`` that also keeps each parameter's ``Version``
    (``GetParameter`` returns it beside the value) in ``provider.versions``:
    name -> (value, version). Values are still cached by Powertools."""
    from aws_lambda_powertools.utilities.parameters import SSMProvider

    class VersionedSSMProvider(SSMProvider):
        def __init__(self) -> None:
            super().__init__()
            self.versions: dict[str, tuple[str, int]] = {}

        def _get(self, name: str, decrypt: bool = False, **sdk_options: Any) -> str:
            sdk_options["Name"] = name
            sdk_options["WithDecryption"] = decrypt
            parameter = self.client.get_parameter(**sdk_options)["Parameter"]
            value = str(parameter["Value"])
            self.versions[name] = (value, int(parameter.get("Version") or 0))
            return value

    return VersionedSSMProvider()


class _ParsedPolicies:
    """Memo of the last parsed document: text digest -> Policy (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._digest = ""
        self._policy: Policy | None = None

    def parse(self, text: str, origin: str) -> Policy:
        digest = hashlib.sha256(text.encode()).hexdigest()
        with self._lock:
            if self._policy is not None and digest == self._digest:
                return self._policy
        try:
            policy = load_policy(text)
        except PolicyError as exc:
            raise PolicyError([f"{origin}: {fault}" for fault in exc.faults]) from None
        with self._lock:
            self._digest, self._policy = digest, policy
        return policy


class SsmPolicySource:
    """The policy kept in an SSM parameter, read with Powertools Parameters and cached.

    Args:
        parameter_name: the SSM parameter name (``POLICY_PARAMETER``).
        max_age: cache lifetime in seconds; None = Powertools' default (300 s or
            ``POWERTOOLS_PARAMETERS_MAX_AGE``).
        provider: a Powertools ``SSMProvider`` (a :func:`versioned_ssm_provider` when
            None; another provider gives stamps without a version).

    IAM: ``ssm:GetParameter`` on the parameter (plus ``kms:Decrypt`` for SecureString).
    """

    def __init__(
        self, parameter_name: str, max_age: int | None = None, provider: Any = None
    ) -> None:
        self._provider = provider if provider is not None else versioned_ssm_provider()
        self._name = parameter_name
        self._max_age = max_age
        self._parsed = _ParsedPolicies()
        self.stamp: PolicyStamp | None = None

    def current(self, force_fetch: bool = False) -> Policy:
        """The policy as of the cached (or, with ``force_fetch``, fresh) parameter value.

        Raises:
            PolicyError: the parameter holds an invalid policy (faults prefixed with
                ``ssm:<name>``).
            aws_lambda_powertools.utilities.parameters.GetParameterError: SSM failed.
        """
        kwargs: dict[str, Any] = {"force_fetch": force_fetch}
        if self._max_age is not None:
            kwargs["max_age"] = self._max_age
        text = str(self._provider.get(self._name, **kwargs))
        policy = self._parsed.parse(text, f"ssm:{self._name}")
        fetched = getattr(self._provider, "versions", {}).get(self._name)
        version = fetched[1] if fetched and fetched[0] == text and fetched[1] else None
        self.stamp = PolicyStamp(version, _digest(text))
        return policy


class FilePolicySource:
    """The policy kept in a local YAML file (``POLICY_FILE``), read on every call.

    Raises (from :meth:`current`):
        PolicyError: the file is missing, unreadable or invalid (faults prefixed with
            the path).
    """

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)
        self._parsed = _ParsedPolicies()
        self.stamp: PolicyStamp | None = None

    def current(self, force_fetch: bool = False) -> Policy:
        """The policy in the file now (``force_fetch`` is accepted for symmetry)."""
        try:
            text = self._path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PolicyError([f"{self._path}: cannot read the policy file: {exc}"]) from None
        policy = self._parsed.parse(text, str(self._path))
        self.stamp = PolicyStamp(None, _digest(text))
        return policy


def policy_source(policy_file: str, policy_parameter: str) -> SsmPolicySource | FilePolicySource:
    """The source the settings name: ``POLICY_FILE`` wins over ``POLICY_PARAMETER``.

    Raises:
        RuntimeError: neither is set.
    """
    if policy_file:
        return FilePolicySource(policy_file)
    if policy_parameter:
        return SsmPolicySource(policy_parameter)
    raise RuntimeError("setting POLICY_PARAMETER (or POLICY_FILE locally) is not set")
