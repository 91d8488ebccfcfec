"""HTTP plumbing shared by the Ollama and OpenAI providers (httpx, imported lazily).

Each request gets real connect/read/write timeouts of ``embedding.timeout_ms``.
Failures that can heal — a timeout, a network or protocol error, HTTP 429 and
5xx — are retried on the provider's schedule (docs/embeddings.md) with jitter ×0.85–1.15;
a ``Retry-After`` header (seconds or HTTP date) is a minimum that jitter only
lengthens, and one longer than :data:`MAX_RETRY_AFTER_S` ends the call instead of
stalling it. Everything else — other statuses, malformed JSON, a wrong shape, an
answer over :data:`_MAX_RESPONSE_BYTES` (the body is streamed and reading stops at
the cap) — fails at once and is not retryable. Failure reasons are short codes
(``timeout``, ``http_503``, ``response_invalid: …``) and never contain input text,
URLs or credentials. Redirects are not followed, so a credential never travels
to a host the user did not configure.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from typing import TYPE_CHECKING, Any, NoReturn

from ragit import _json
from ragit.embed.base import Embedder, ProviderOptions, Vector
from ragit.embed.profile import EmbeddingProfile

if TYPE_CHECKING:
    import httpx

MAX_RETRY_AFTER_S = 60.0
_MAX_RESPONSE_BYTES = 256 * 1024 * 1024


class _NonFinite(ValueError):
    pass


def _reject_constant(name: str) -> NoReturn:
    raise _NonFinite(name)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta seconds or HTTP date).

    Returns None when the header is absent or unparseable; a date in the past is 0.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def parse_vector(raw: object) -> Vector:
    """A JSON array of numbers as floats.

    Raises:
        ValueError: not an array, a non-number (booleans included) or a non-finite value.
    """
    if not isinstance(raw, list):
        raise ValueError("not an array")
    out: Vector = []
    append = out.append
    for item in raw:
        kind = type(item)
        if kind is float:
            append(item)
        elif kind is int:
            append(float(item))
        else:
            raise ValueError("non-numeric value")
    if not math.isfinite(sum(out)):
        raise _NonFinite("non-finite value")
    return out


class HttpEmbedder(Embedder):
    """A provider reached with one JSON POST per batch."""

    def __init__(self, profile: EmbeddingProfile, options: ProviderOptions | None = None) -> None:
        super().__init__(profile)
        self._options = options or ProviderOptions()
        self._retry = profile.spec.retry
        self._client: httpx.Client | None = None

    @property
    def timeout_ms(self) -> int:
        return self._options.timeout_ms

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _http(self) -> httpx.Client:
        if self._client is None:
            import httpx

            seconds = self._options.timeout_ms / 1000.0
            self._client = httpx.Client(
                timeout=httpx.Timeout(seconds),
                follow_redirects=False,
                # Proxy settings apply to remote endpoints only: loopback traffic
                # must never be routed through a proxy (and .netrc is not consulted
                # because credentials are set explicitly).
                trust_env=self._profile.egress == "remote",
            )
        return self._client

    def _post_json(self, url: str, payload: dict[str, Any], headers: dict[str, str]) -> object:
        """POST ``payload`` and return the decoded JSON answer, retrying per policy.

        Raises:
            EmbeddingProviderFailed: the request failed for good or the answer is not JSON.
        """
        import httpx

        client = self._http()
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        send_headers = {"Content-Type": "application/json", "Accept": "application/json"}
        send_headers.update(headers)
        delays = self._retry.delays_ms
        attempt = 0
        while True:
            retry_after: float | None = None
            self.requests_sent += 1
            try:
                # Streamed: only a 2xx body is read, and only up to the size cap.
                with client.stream("POST", url, content=body, headers=send_headers) as response:
                    status = response.status_code
                    if 200 <= status < 300:
                        return self._decode(self._read_capped(response))
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
            except httpx.TimeoutException:
                reason = "timeout"
            except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError):
                reason = "connection_error"
            except httpx.HTTPError as exc:
                raise self.fail(f"request_error: {type(exc).__name__}") from None
            else:
                reason = f"http_{status}"
                if status != 429 and not 500 <= status <= 599:
                    raise self.fail(reason)
            if attempt >= len(delays):
                raise self.fail(reason, retryable=True)
            if retry_after is not None and retry_after > MAX_RETRY_AFTER_S:
                raise self.fail(
                    f"{reason}: retry-after {retry_after:.0f}s exceeds {MAX_RETRY_AFTER_S:.0f}s",
                    retryable=True,
                )
            self._options.sleep(self._delay(delays[attempt], retry_after))
            attempt += 1

    def _delay(self, base_ms: int, retry_after: float | None) -> float:
        base = base_ms / 1000.0
        if retry_after is None:
            return base * self._options.jitter(0.85, 1.15)
        return max(base, retry_after) * self._options.jitter(1.0, 1.15)

    def _read_capped(self, response: httpx.Response) -> bytes:
        """The body of a streamed ``response``, refused as soon as it exceeds the cap.

        A declared ``Content-Length`` over the cap is refused before reading; otherwise
        reading stops at the first chunk past the cap (closing the response drops the
        connection), so an oversized or endless answer never sits whole in memory.
        """
        cap = _MAX_RESPONSE_BYTES
        declared = response.headers.get("Content-Length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > cap:
            raise self.fail("response_invalid: too large")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > cap:
                raise self.fail("response_invalid: too large")
            chunks.append(chunk)
        return b"".join(chunks)

    def _decode(self, content: bytes) -> object:
        try:
            return _json.loads(content, parse_constant=_reject_constant)
        except _NonFinite:
            raise self.fail("response_invalid: non-finite value") from None
        except (ValueError, UnicodeDecodeError):
            raise self.fail("response_invalid: malformed json") from None

    def _vectors(self, rows: object) -> list[Vector]:
        if not isinstance(rows, list):
            raise self.fail("response_invalid: unexpected shape")
        try:
            return [parse_vector(row) for row in rows]
        except _NonFinite:
            raise self.fail("response_invalid: non-finite value") from None
        except ValueError as exc:
            raise self.fail(f"response_invalid: {exc}") from None
