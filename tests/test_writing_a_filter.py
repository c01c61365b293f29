"""The worked example of docs/writing-a-filter.md, run as the page shows it:
its code block is read out of the page (so page and test cannot drift),
registered in ``FILTERS`` and driven through the engine for all three APIs."""
from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from enginedriver import EngineDriver
from apicalls import AUTH, PATHS, config, request_body, streamed_text, whole_text

from ctxproxy import filters
from ctxproxy.config import ConfigError
from ctxproxy.proxy.scripted_provider import Reply

PAGE = Path(__file__).resolve().parents[1] / "docs" / "writing-a-filter.md"
MODULE = "ctxproxy_doc_house_note"
ANSWER = "Plain words, as the house asks."


def example_module() -> types.ModuleType:
    """The page's first ```python block, as a module."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert blocks, "docs/writing-a-filter.md has no python code block"
    mod = types.ModuleType(MODULE)
    sys.modules[MODULE] = mod
    exec(compile(blocks[0], str(PAGE), "exec"), mod.__dict__)
    return mod


@pytest.fixture
def house_note(monkeypatch):
    mod = example_module()
    monkeypatch.setitem(filters.FILTERS, "house_note", f"{MODULE}:HouseNoteFilter")
    yield mod
    sys.modules.pop(MODULE, None)


PIPELINE = """
[pipeline]
request = ["identify", "redact", "effects", "checkpoint", "prune", "recall", "inject", "memory_tool", "house_note", "manifest"]

[filters.house_note]
text = "House rule: answer in plain words. Reach ops at {secret}."
"""
SECRET = "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_the_example_edits_the_request_and_reports_to_the_manifest(tmp_path, house_note, api, stream):
    async with EngineDriver(config(tmp_path, PIPELINE.format(secret=SECRET))) as drive:
        drive.script(Reply.text(ANSWER))
        got = await drive.call("POST", PATHS[api], {**AUTH[api], "content-type": "application/json"},
                               request_body(api, "hello there", stream))
        assert got.status == 200, got.body
        sent = got.forwarded.body
        assert b"House rule: answer in plain words." in sent  # the edit reached the provider
        assert SECRET.encode() not in sent and b"[REDACTED:" in sent  # added text redacted like the request
        text = streamed_text(api, got.body) if stream else whole_text(api, got.body)
        assert text == ANSWER
        drive.services["writer"].flush()
        doc = drive.services["store"].manifests.get(got.turn.identity.tenant, got.turn.turn_id).data
        part = doc["filters"]["house_note"]  # the report reached the manifest
        assert part["placed"] and part["tokens"] > 5
        assert part["answer_chars"] == len(ANSWER)
        assert "house_note" not in doc["degraded"]


def test_the_example_without_its_section_uses_the_defaults(tmp_path, house_note):
    cfg = config(tmp_path, '[pipeline]\nrequest = ["house_note", "manifest"]\n')
    configs = filters.filter_configs(cfg)
    assert configs["house_note"] == house_note.HouseNoteConfig()


@pytest.mark.parametrize("section, error", [
    ('text = "  "', "filters.house_note.text: expected a non-empty note"),
    ('colour = "red"', "filters.house_note.colour: unknown key"),
    ("stable = 3", "filters.house_note.stable"),
])
def test_a_bad_section_names_the_key(tmp_path, house_note, section, error):
    cfg = config(tmp_path, f'[pipeline]\nrequest = ["house_note", "manifest"]\n\n[filters.house_note]\n{section}\n')
    with pytest.raises(ConfigError, match=re.escape(error)):
        filters.filter_configs(cfg)


def test_a_successor_keeps_the_note_but_not_the_answer(house_note):
    st = house_note.HouseNoteState("system[0]", 9, 40)
    assert house_note.HouseNoteFilter.successor_state(st) == house_note.HouseNoteState("system[0]", 9, 0)
