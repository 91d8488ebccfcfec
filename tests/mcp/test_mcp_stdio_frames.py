"""The real ``ragit-mcp`` process over real stdio: raw frames, end of input, SIGINT.

Every request with an id gets exactly one answer, whatever the line looks like
(docs/mcp.md "Malformed frames"); every request received before stdin closes is
answered before the process exits; SIGINT ends the process at once with 130 and
never leaves half a frame on stdout. The conformance case format sends only
well-formed JSON (``conformance/mcp_driver.py`` serializes a request object), so
these raw-line rules are tested here.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _mcp_helpers import RAGIT_MCP, assert_unchanged, tree_state

INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"raw-frames","version":"1"}}}'
)
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
# JSON.stringify('a \ud800 b') in Node: a lone high surrogate, escaped.
SURROGATE_CALL = (
    '{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"ragit_query",'
    '"arguments":{{"question":"a \\ud800 b"}}}}}}'
).format
STATUS_CALL = (
    '{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"ragit_status",'
    '"arguments":{{}}}}}}'
).format
QUERY_CALL = (
    '{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"ragit_query",'
    '"arguments":{{"question":"decision {}","view":"full","topK":50}}}}}}\n'
).format


def _exchange(root: Path, env: dict[str, str], lines: list[str]) -> tuple[list[Any], str, int]:
    """Write ``lines`` then close stdin; every stdout line (parsed), stderr and the exit code."""
    proc = subprocess.run(
        [RAGIT_MCP, "--cwd", str(root)],
        cwd=root,
        env=env,
        input=("\n".join(lines) + "\n").encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    out = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    return out, proc.stderr.decode("utf-8", "replace"), proc.returncode


def _by_id(messages: list[Any]) -> dict[Any, list[Any]]:
    answers: dict[Any, list[Any]] = {}
    for message in messages:
        assert message.get("jsonrpc") == "2.0", message
        answers.setdefault(message.get("id"), []).append(message)
    return answers


def test_lone_surrogate_in_a_tool_argument_is_an_invalid_input_result(
    indexed_repo: tuple[Path, dict[str, str]],
) -> None:
    """Implementation choice: the SDK reader drops the line; ragit answers MCP_INVALID_INPUT."""
    root, env = indexed_repo
    before = tree_state(root)
    out, stderr, code = _exchange(
        root, env, [INITIALIZE, INITIALIZED, SURROGATE_CALL(2), STATUS_CALL(3)]
    )
    assert_unchanged(before, tree_state(root))
    answers = _by_id(out)
    assert code == 0 and stderr == ""
    assert len(answers.get(2, [])) == 1, out
    result = answers[2][0]["result"]
    assert result["isError"] is True
    envelope = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == envelope
    error = envelope["error"]
    assert envelope["tool"] == "ragit_query"
    assert error["code"] == "MCP_INVALID_INPUT"
    assert error["details"] == {"field": "question"}
    assert "surrogate" in error["message"]
    assert error["recovery"] == {
        "command": None,
        "hint": "Correct the tool arguments and retry.",
    }
    assert answers[3][0]["result"]["isError"] is False  # the server is still serving


@pytest.mark.parametrize(
    ("line", "request_id", "code"),
    [
        pytest.param('{"jsonrpc":"1.0","id":2,"method":"tools/list"}', 2, -32600, id="jsonrpc-1.0"),
        pytest.param('{"jsonrpc":"2.0","id":2,"method":"tools/list","params":[]}', 2, -32600,
                     id="params-array"),
        pytest.param('{"jsonrpc":"2.0","id":2,"params":{}}', 2, -32600, id="no-method"),
        pytest.param('{"jsonrpc":"2.0","id":2,"method":7}', 2, -32600, id="method-number"),
        pytest.param('{"jsonrpc":"2.0","id":2.5,"method":"tools/list"}', None, -32600,
                     id="fractional-id"),
        pytest.param('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ragit_q',
                     2, -32700, id="cut-line"),
        pytest.param("this is not json", None, -32700, id="not-json"),
        pytest.param("[1, 2]", None, -32600, id="batch-array"),
        pytest.param('{"jsonrpc":"2.0","id":"s","method":"ping","params":{"x":"\\udc00"}}', "s",
                     -32602, id="surrogate-outside-tools-call"),
        # About 1 KB nested 500 deep parses, then broke the first recursive walk and the
        # reader thread with it: every later request went unanswered.
        pytest.param('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":'
                     '"ragit_query","arguments":{"question":"x","x":' + "[" * 500 + "]" * 500
                     + "}}}", 2, -32600, id="nested-500-deep"),
        # Deeper than Python's parser recurses.
        pytest.param('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":'
                     '"ragit_query","arguments":{"question":' + "[" * 5000 + "]" * 5000
                     + "}}}", 2, -32600, id="nested-5000-deep"),
    ],
)  # fmt: skip
def test_a_malformed_frame_gets_one_json_rpc_error(
    indexed_repo: tuple[Path, dict[str, str]], line: str, request_id: Any, code: int
) -> None:
    """Implementation choice: never silence: one error answer, and the server keeps serving."""
    root, env = indexed_repo
    out, stderr, exit_code = _exchange(root, env, [INITIALIZE, INITIALIZED, line, STATUS_CALL(9)])
    answers = _by_id(out)
    assert exit_code == 0 and stderr == ""
    assert len(answers.get(request_id, [])) == 1, out
    error = answers[request_id][0]["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert set(answers) == {1, request_id, 9}, out
    assert answers[9][0]["result"]["isError"] is False


def test_end_of_input_answers_every_request_already_received(
    indexed_repo: tuple[Path, dict[str, str]],
) -> None:
    """Implementation choice: `printf '<init><call><call><call>' | ragit-mcp` prints all four
    replies."""
    root, env = indexed_repo
    query = (
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ragit_query",'
        '"arguments":{"question":"storage engine decision"}}}'
    )
    out, stderr, code = _exchange(root, env, [INITIALIZE, STATUS_CALL(2), STATUS_CALL(3), query])
    answers = _by_id(out)
    assert code == 0 and stderr == ""
    assert sorted(answers) == [1, 2, 3, 4], out
    assert all(len(v) == 1 for v in answers.values())
    assert answers[4][0]["result"]["structuredContent"]["ok"] is True


def _start(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [RAGIT_MCP, "--cwd", str(root)],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE.encode() + b"\n" + INITIALIZED.encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    return proc


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "during-calls"])
def test_sigint_exits_promptly_with_130_and_whole_frames(
    indexed_repo: tuple[Path, dict[str, str]], busy: bool
) -> None:
    """Implementation choice: SIGINT with stdin still open ends the process (130) within seconds."""
    root, env = indexed_repo
    proc = _start(root, env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    chunks: list[bytes] = []
    stdout = proc.stdout
    reader = threading.Thread(
        target=lambda: chunks.extend(iter(lambda: stdout.read(4096), b"")), daemon=True
    )
    reader.start()
    try:
        if busy:
            for n in range(2, 12):
                proc.stdin.write(QUERY_CALL(n, n).encode())
            proc.stdin.flush()
            time.sleep(0.5)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=10)
        elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
    reader.join(timeout=10)
    rest = b"".join(chunks)
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.stderr.close()
    assert code == 130
    assert elapsed < 5
    assert stderr == b""
    assert rest == b"" or rest.endswith(b"\n")
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
