"""Hermes' config.yaml is edited line by line: funes' entries in, funes' entries out, every
other byte — comments, quoting, blank lines, line endings — as the user left it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from funes.agents import ConfigError, Context
from funes.agents.hermes import edit_config

CTX = Context(home=Path("/home/kim"), funes_bin="/opt/funes/bin/funes")


@pytest.mark.parametrize(
    "original",
    [
        "",
        "model: x\n",
        "model: x",  # no final newline
        "hooks: {}\nmodel: x\n",
        "hooks: {}   # none yet\n",
        "hooks:\nmcp_servers: ~\n",
        "# only a comment\n",
        "model: x\r\nhooks:\r\n  post_llm_call:\r\n    - command: a.sh\r\n",
        "hooks:\n  post_llm_call:\n  - command: same-indent.sh\n  on_session_finalize:\n\nother: 1\n",
        "hooks:\n    post_llm_call:\n        -   command: deep.sh\n            timeout: 3\n# tail comment\n",
        "mcp_servers:\n  funes:\n    command: old-funes\n",  # a registration of its own is replaced
    ],
)
def test_add_then_remove_gives_back_the_same_bytes(original: str) -> None:
    added = edit_config(original, CTX)
    doc = yaml.safe_load(added)
    cmd = 'bash "/home/kim/.hermes/hooks/funes-index.sh" "hermes" --funes "/opt/funes/bin/funes"'
    assert doc["hooks"]["post_llm_call"][-1] == {"command": cmd, "timeout": 30}
    assert doc["hooks"]["on_session_finalize"][-1] == {"command": cmd, "timeout": 30}
    assert doc["mcp_servers"]["funes"] == {"command": "/opt/funes/bin/funes", "args": ["mcp"]}
    assert edit_config(added, CTX) == added  # idempotent
    removed = edit_config(added, None)
    if "old-funes" in original:
        assert removed == "mcp_servers:\n"
    else:
        assert removed == original


def test_user_hooks_keep_their_order_and_comments() -> None:
    original = "hooks:\n  post_llm_call:\n    - command: a.sh  # first\n    - command: b.sh\n"
    added = edit_config(original, CTX)
    assert added.startswith(original)
    assert [e["command"] for e in yaml.safe_load(added)["hooks"]["post_llm_call"]][:2] == [
        "a.sh",
        "b.sh",
    ]


def test_memory_and_quotes_survive_the_yaml_quoting() -> None:
    ctx = Context(home=Path("/home/o'neil"), funes_bin="/opt/it's/funes", memory="/m/a b")
    doc = yaml.safe_load(edit_config("", ctx))
    assert doc["hooks"]["post_llm_call"][0]["command"] == (
        'bash "/home/o\'neil/.hermes/hooks/funes-index.sh" "hermes" --funes "/opt/it\'s/funes"'
        ' --memory "/m/a b"'
    )
    assert doc["mcp_servers"]["funes"]["args"] == ["mcp", "--memory", "/m/a b"]


@pytest.mark.parametrize(
    "text",
    [
        "hooks: [1, 2]\n",
        "- a\n",
        "hooks:\n  post_llm_call: [{command: x}]\n",
        "a: [\n",
        "x: 1\n---\ny: 2\n",
    ],
)
def test_what_cannot_be_edited_safely_is_refused(text: str) -> None:
    with pytest.raises(ConfigError):
        edit_config(text, CTX)
