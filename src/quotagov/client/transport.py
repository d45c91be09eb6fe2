"""How the client reaches a quotagov API: SigV4-signed HTTPS, or ``quotagov serve``.

Three transports, one call (:meth:`Transport.send`):

- :class:`SigV4Transport`, for a deployed stack: every request is signed with AWS
  Signature Version 4 for the ``execute-api`` service (what API Gateway's ``AWS_IAM``
  authorization checks,
  https://docs.aws.amazon.com/apigateway/latest/developerguide/permissions.html), with
  credentials from botocore's standard chain (environment, shared config and
  credentials files with a named profile, SSO, container and instance roles:
  https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html);
- :class:`TokenTransport`, for a deployed stack's Cognito (JWT) API: the user pool ID
  token in the ``Authorization`` header;
- :class:`LocalTransport`, for ``quotagov serve``: the caller's principal goes in the
  ``X-Quotagov-Principal`` header the local server reads instead of a signature. It is
  refused for any URL whose host is not loopback (:func:`quotagov.client.loopback.is_loopback`),
  so a principal header can never be sent to a real API or another machine.

Both send with urllib3 (a botocore dependency), which ignores proxy environment
variables: a loopback URL is never sent through a proxy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit

import urllib3

#: The header ``quotagov serve`` takes the caller's principal from.
PRINCIPAL_HEADER = "X-Quotagov-Principal"
#: Seconds to wait for a connection and for an answer.
DEFAULT_TIMEOUT_SECONDS = 30.0


class TransportError(Exception):
    """The API could not be reached (connection refused, DNS, TLS, timeout) or the
    client is set up wrongly (no credentials, a principal header for a remote URL)."""


@dataclass(frozen=True)
class HttpAnswer:
    """An HTTP answer: ``status`` code and the body decoded as JSON (``None`` when
    empty; the text itself when it is not JSON)."""

    status: int
    body: Any


class Transport(Protocol):
    """Sends one request to the API and returns its answer."""

    base_url: str

    def send(
        self, method: str, path: str, *, query: dict[str, str] | None = None, body: Any = None
    ) -> HttpAnswer:
        """``method`` ``path`` (below :attr:`base_url`, e.g. ``/jobs``) with ``query``
        parameters and a JSON ``body``. Raises :class:`TransportError`."""
        ...


def _url(base_url: str, path: str, query: dict[str, str] | None) -> str:
    url = base_url.rstrip("/") + "/" + path.lstrip("/")
    if query:
        url += "?" + urlencode(sorted(query.items()))
    return url


def _decode(data: bytes) -> Any:
    if not data:
        return None
    text = data.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class _Urllib3Transport:
    def __init__(self, base_url: str, timeout: float) -> None:
        scheme = urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            raise TransportError(f"api url: {base_url!r} is not an http(s) URL")
        self.base_url = base_url
        self._pool = urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=timeout, read=timeout), retries=False
        )

    def _headers(self, method: str, url: str, data: bytes | None) -> dict[str, str]:
        raise NotImplementedError

    def send(
        self, method: str, path: str, *, query: dict[str, str] | None = None, body: Any = None
    ) -> HttpAnswer:
        url = _url(self.base_url, path, query)
        data = None if body is None else json.dumps(body).encode()
        headers = self._headers(method, url, data)
        try:
            response = self._pool.request(method, url, body=data, headers=headers)
        except urllib3.exceptions.HTTPError as exc:
            raise TransportError(f"{method} {url}: {exc}") from exc
        return HttpAnswer(response.status, _decode(response.data))


class LocalTransport(_Urllib3Transport):
    """``quotagov serve`` at a loopback ``base_url``, calling as ``principal``.

    Raises:
        TransportError: ``base_url`` is not an http(s) URL on a loopback host.
    """

    def __init__(
        self, base_url: str, principal: str, timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        from quotagov.client.loopback import is_loopback

        host = urlsplit(base_url).hostname
        if not is_loopback(host):
            raise TransportError(
                f"--as: a principal header is only sent to quotagov serve on loopback, "
                f"not to {host or base_url!r}; a deployed API takes SigV4-signed requests"
            )
        super().__init__(base_url, timeout)
        self.principal = principal

    def _headers(self, method: str, url: str, data: bytes | None) -> dict[str, str]:
        headers = {PRINCIPAL_HEADER: self.principal, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        return headers


class SigV4Transport(_Urllib3Transport):
    """A deployed API at ``base_url``, requests signed with ``session``'s credentials.

    Args:
        base_url: the stack's ``ApiUrl`` output
            (``https://abc123.execute-api.eu-west-1.amazonaws.com/v1/``).
        session: a botocore session (its profile, region and credential chain); a new
            default session when None.
        region: the API's region; default: read from an ``execute-api`` host name, else
            the session's region.

    Raises:
        TransportError: no region can be found, or no credentials.
    """

    def __init__(
        self,
        base_url: str,
        *,
        session: Any = None,
        region: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        import botocore.session

        super().__init__(base_url, timeout)
        self._session = session or botocore.session.get_session()
        self.region = region or region_of(base_url) or self._session.get_config_variable("region")
        if not self.region:
            raise TransportError(
                "region: not in the API URL and not configured (--region, AWS_REGION or the "
                "profile's region)"
            )

    def _headers(self, method: str, url: str, data: bytes | None) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = self._session.get_credentials()
        if credentials is None:
            raise TransportError(
                "no AWS credentials found (environment, profile, SSO or role): "
                "see https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html"
            )
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = AWSRequest(method=method, url=url, data=data, headers=headers)
        SigV4Auth(credentials.get_frozen_credentials(), "execute-api", self.region).add_auth(
            request
        )
        return dict(request.headers.items())


class TokenTransport(_Urllib3Transport):
    """A deployed stack's Cognito (JWT) API at ``base_url`` (the ``JwtApiUrl`` output),
    each request carrying a user pool token in the ``Authorization`` header, the header
    the ``COGNITO_USER_POOLS`` authorizer reads
    (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-integrate-with-cognito.html).

    Args:
        base_url: the ``JwtApiUrl`` output; ``https`` (``http`` only on loopback), so the
            token never travels in clear text.
        token: the signed-in user's ID token (a JWT; a leading ``Bearer `` is dropped).

    Raises:
        TransportError: ``token`` is empty or not three dot-separated JWT parts, or
            ``base_url`` is plain ``http`` to a host that is not loopback.
    """

    def __init__(self, base_url: str, token: str, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        from quotagov.client.loopback import is_loopback

        super().__init__(base_url, timeout)
        parts = urlsplit(base_url)
        if parts.scheme != "https" and not is_loopback(parts.hostname):
            raise TransportError(
                f"token: not sent over plain http to {parts.hostname or base_url!r}: use the "
                "https JwtApiUrl"
            )
        token = token.strip().removeprefix("Bearer ").strip()
        if token.count(".") != 2 or any(not piece for piece in token.split(".")):
            raise TransportError(
                "token: not a JWT (three dot-separated parts): give the user pool ID token"
            )
        self._token = token

    def _headers(self, method: str, url: str, data: bytes | None) -> dict[str, str]:
        headers = {"Authorization": self._token, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        return headers


def region_of(url: str) -> str | None:
    """The region in an API Gateway host name (``abc.execute-api.eu-west-1.amazonaws.com``
    -> ``eu-west-1``), else None."""
    parts = (urlsplit(url).hostname or "").split(".")
    if len(parts) >= 4 and parts[1] == "execute-api":
        return parts[2]
    return None
