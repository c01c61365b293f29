"""``ctxproxy demo`` runs its scripted session end to end and shows each feature."""
import io

from ctxproxy.proxy.cli.demo import run


async def test_demo_session_shows_every_feature(tmp_path):
    out = io.StringIO()
    assert await run(tmp_path, out=out) == 0
    text = out.getvalue()
    turns = text.split("=== turn ")[1:]
    assert len(turns) == 5
    assert "Bash" in turns[0] and "pending" in turns[0]          # the side effect, recorded
    assert "completed" in turns[1]                                 # its result matched
    assert "openai-project-key  1" in turns[3]                     # the secret, redacted
    assert "ctx://pruned/" in turns[3]                             # the old build log, pruned
    assert "checkpoint" in turns[4] and "placed" in turns[4]       # after compaction
    assert "the secret never reached it" in text
