"""The filter pipeline: order, timing, fail-open vs fail-closed, undo, write-ahead commits."""
import asyncio
import contextlib
import threading

import orjson
import pytest

from ctxproxy.filters import CommitFailed, FilterError, Pipeline, Services, Turn
from ctxproxy.filters.base import Filter
from ctxproxy.store import StoreError
from ctxproxy.store.errors import StoreConflict
from ctxproxy.store.writer import BackgroundWriter
from storelock import write_lock_held
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS

RAW = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
TOKENS = TokenCounter()


def turn():
    return Turn(api="chat", route="openai", path="/v1/chat/completions", headers={},
                request=ADAPTERS["chat"].parse_request(RAW), tokens=TOKENS)


class Append(Filter):
    def __init__(self, name, text, required=False, fail=False):
        self.name, self.text, self.required, self.fail = name, text, required, fail

    def on_request(self, t):
        t.state.setdefault("order", []).append(self.name)
        t.request.add_turn_segment(self.text)
        if self.fail:
            raise RuntimeError("boom")


def test_request_filters_run_in_order_and_are_timed():
    t = turn()
    Pipeline([Append("a", "A"), Append("b", "B")]).run_request(t)
    assert t.state["order"] == ["a", "b"]
    assert set(t.timings_ms) == {"a", "b"}
    assert orjson.loads(t.request.to_bytes())["messages"][0]["content"].endswith("A\n\nB")


def test_failing_optional_filter_is_undone_and_marks_degraded():
    t = turn()
    p = Pipeline([Append("a", "A"), Append("bad", "HALF-EDIT", fail=True), Append("c", "C")])
    p.run_request(t, reparse=lambda: ADAPTERS["chat"].parse_request(RAW))
    content = orjson.loads(t.request.to_bytes())["messages"][0]["content"]
    assert "HALF-EDIT" not in content and "A" in content and "C" in content
    assert t.degraded == ["bad"]


def test_failing_required_filter_blocks():
    t = turn()
    with pytest.raises(FilterError) as exc:
        Pipeline([Append("guard", "X", required=True, fail=True)]).run_request(t)
    assert exc.value.filter_name == "guard" and exc.value.turn_id == t.turn_id
    assert "RuntimeError" in exc.value.message


class Splitter(Filter):
    name = "split"

    def on_response_event(self, t, ev):
        return [ev, ev]


class Counter(Filter):
    name = "count"

    def on_response_event(self, t, ev):
        t.state["seen"] = t.state.get("seen", 0) + 1


def test_response_events_flow_in_request_order():
    # split runs first, so count sees both copies: response hooks keep config order
    t = turn()
    p = Pipeline([Splitter(), Counter()])
    state = ADAPTERS["chat"].stream()
    out = p.run_event(t, state.event(None, b"data: {}\n\n", b"{}"))
    assert len(out) == 2 and t.state["seen"] == 2



class LastEdit:
    """An egress that uppercases every delta after the filters saw it."""
    name = "shout"

    def __init__(self, fail=False):
        self.fail = fail

    def event(self, t, ev):
        if self.fail:
            raise RuntimeError("boom")
        for d in ev.deltas():
            d.text = d.text.upper()


class Asks(Filter):
    """Asks for the last edit on the request; records what it saw of the answer."""
    name = "asks"

    def __init__(self, egress):
        self.egress = egress

    def on_request(self, t):
        t.add_egress(self.egress)
        t.add_egress(self.egress)  # asked twice (a replayed pass): runs once

    def on_response_event(self, t, ev):
        t.state.setdefault("saw", []).extend(d.text for d in ev.deltas())


def test_an_egress_edits_the_answer_after_every_filter():
    t = turn()
    p = Pipeline([Asks(LastEdit()), Counter()])
    p.run_request(t)
    state = ADAPTERS["chat"].stream()
    data = b'{"choices":[{"index":0,"delta":{"content":"quiet"}}]}'
    out = p.run_event(t, state.event(None, b"data: " + data + b"\n\n", data))
    assert t.state["saw"] == ["quiet"]  # the filters saw the answer as the provider sent it
    assert [d.text for d in out[0].deltas()] == ["QUIET"] and b"QUIET" in out[0].to_bytes()
    assert "shout" in t.timings_ms


def test_a_failing_egress_fails_the_answer_closed():
    t = turn()
    p = Pipeline([Asks(LastEdit(fail=True))])
    p.run_request(t)
    data = b'{"choices":[{"index":0,"delta":{"content":"x"}}]}'
    with pytest.raises(FilterError) as exc:
        p.run_event(t, ADAPTERS["chat"].stream().event(None, b"data: " + data + b"\n\n", data))
    assert exc.value.status == 502 and exc.value.filter_name == "shout" and t.degraded == ["shout"]

# -- write-ahead commits (Turn.commit) --------------------------------------------------------


class Records(Filter):
    """Writes a session record before the request goes on, then edits the body
    with what the write returned (as effects, prune and inject do)."""

    def __init__(self, name, store, required=True, fail_commit=False, tolerant=False):
        self.name, self.store, self.required = name, store, required
        self.fail_commit, self.tolerant = fail_commit, tolerant

    async def on_request(self, t):
        def write(b):
            t.state.setdefault("write_threads", []).append(threading.get_ident())
            b.sessions.update("default", "s1", {self.name: "on disk"})
            if self.fail_commit:
                raise StoreError("disk full (test)")
            return self.name

        try:
            result = await t.commit(self.store, write, "could not save (test)")
        except CommitFailed as exc:
            if not self.tolerant:
                raise
            t.state.setdefault("order", []).append(f"{self.name} lost {type(exc.__cause__).__name__}")
            return
        t.state.setdefault("order", []).append(f"{result} committed")
        t.request.add_turn_segment(f"[{result}]")


def test_commit_lands_before_the_next_filter_runs(store):
    t = turn()
    Pipeline([Records("rec", store), Append("after", "A")]).run_request(t)
    assert t.state["order"] == ["rec committed", "after"]
    assert store.sessions.get("default", "s1") == {"rec": "on disk"}
    assert orjson.loads(t.request.to_bytes())["messages"][0]["content"].endswith("[rec]\n\nA")
    assert set(t.timings_ms) == {"rec", "after"}


async def test_the_proxy_commits_on_the_writer_thread(store):
    writer = BackgroundWriter(store)
    try:
        t = turn()
        t.services = Services(store=store, writer=writer)
        await Pipeline([Records("rec", store), Append("after", "A")]).run_request_async(t)
        assert t.state["order"] == ["rec committed", "after"]
        assert t.state["write_threads"] != [threading.get_ident()]  # not on the event loop's thread
        assert store.sessions.get("default", "s1") == {"rec": "on disk"}
    finally:
        writer.close()


@pytest.mark.parametrize("use_writer", [False, True])
async def test_a_failed_commit_blocks_a_required_filter_with_503(store, use_writer):
    writer = BackgroundWriter(store) if use_writer else None
    try:
        t = turn()
        t.services = Services(store=store, writer=writer)
        with pytest.raises(FilterError) as exc:
            await Pipeline([Records("rec", store, fail_commit=True), Append("after", "A")]).run_request_async(t)
        assert exc.value.status == 503 and exc.value.message == "could not save (test)"
        assert "order" not in t.state and store.sessions.get("default", "s1") is None  # nothing half-done
    finally:
        if writer is not None:
            writer.close()


def test_a_failed_commit_of_an_optional_filter_degrades_the_turn(store):
    t = turn()
    Pipeline([Records("opt", store, required=False, fail_commit=True), Append("after", "A")]).run_request(t)
    assert t.degraded == ["opt"] and t.state["order"] == ["after"]
    assert not orjson.loads(t.request.to_bytes())["messages"][0]["content"].count("[opt]")


def test_a_commit_that_may_be_lost_goes_on_through_on_error(store):
    t = turn()
    Pipeline([Records("tol", store, fail_commit=True, tolerant=True), Append("after", "A")]).run_request(t)
    assert t.state["order"] == ["tol lost StoreError", "after"] and not t.degraded


async def test_a_request_cancelled_before_its_commit_ran_writes_nothing(store):
    writer = BackgroundWriter(store)
    with write_lock_held(store):
        first = writer.submit(lambda b: None, urgent=True)  # the writer waits for the lock on this one
        for _ in range(3000):  # bounded (30 s): a loaded machine starts the writer's thread late
            if first.running():  # its group is formed: the next op queues behind it
                break
            await asyncio.sleep(0.01)
        assert first.running()
        t = turn()
        t.services = Services(store=store, writer=writer)
        task = asyncio.ensure_future(Pipeline([Records("rec", store)]).run_request_async(t))
        await asyncio.sleep(0.1)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    writer.flush()
    writer.close()
    assert "write_threads" not in t.state and store.sessions.get("default", "s1") is None


def test_an_undone_optional_filter_replays_the_commits_before_it(store):
    """An optional filter that fails after editing is undone by replaying the
    filters before it on the original body: a commit among them runs again
    (its write starts over cleanly) and the request goes on without the
    failed filter's edits."""
    t = turn()
    p = Pipeline([Records("rec", store), Append("bad", "HALF-EDIT", fail=True), Append("after", "A")])
    p.run_request(t, reparse=lambda: ADAPTERS["chat"].parse_request(RAW))
    assert t.state["order"] == ["rec committed", "after"]  # the state of the pass that went on
    content = orjson.loads(t.request.to_bytes())["messages"][0]["content"]
    assert content.endswith("[rec]\n\nA") and "HALF-EDIT" not in content
    assert t.degraded == ["bad"] and store.sessions.get("default", "s1") == {"rec": "on disk"}


class HandsOver(Filter):
    """Hands a write-ahead over (``commit_ahead``): it needs no result of it."""

    required = True

    def __init__(self, name, store, fail=False):
        self.name, self.store, self.fail = name, store, fail

    def on_request(self, t):
        def write(b):
            t.state.setdefault("batches", []).append(b)
            b.sessions.update("default", "s1", {self.name: "on disk"})
            if self.fail:
                raise StoreError("disk full (test)")

        t.commit_ahead(self.name, self.store, write, "could not save the handed-over write (test)")
        t.state.setdefault("order", []).append(self.name)


class Commits(Records):
    def __init__(self, name, store, required=True):
        super().__init__(name, store, required)

    async def on_request(self, t):
        def write(b):
            t.state.setdefault("batches", []).append(b)
            b.sessions.update("default", "s1", {self.name: "on disk"})
            return self.name

        t.state.setdefault("order", []).append(await t.commit(self.store, write))


def txn_id(store):
    return store._env.env.info()["last_txnid"]


@pytest.mark.parametrize("use_writer", [False, True])
async def test_a_handed_over_write_ahead_rides_in_the_next_commit(store, use_writer):
    writer = BackgroundWriter(store) if use_writer else None
    try:
        t = turn()
        t.services = Services(store=store, writer=writer)
        before = txn_id(store)
        await Pipeline([HandsOver("ahead", store), Append("mid", "M"), Commits("rec", store)]).run_request_async(t)
        assert t.state["order"] == ["ahead", "mid", "rec"]
        assert store.sessions.get("default", "s1") == {"ahead": "on disk", "rec": "on disk"}
        a, b = t.state["batches"]
        assert a is b and txn_id(store) == before + 1  # one batch, one commit for both
    finally:
        if writer is not None:
            writer.close()


def test_a_handed_over_write_ahead_no_filter_took_is_on_disk_before_the_request_leaves(store):
    t = turn()
    Pipeline([HandsOver("ahead", store), Append("after", "A")]).run_request(t)
    assert t.state["order"] == ["ahead", "after"] and not t.ahead
    assert store.sessions.get("default", "s1") == {"ahead": "on disk"}
    assert "ahead" in t.timings_ms


@pytest.mark.parametrize("later", ["none", "optional commit"])
def test_a_handed_over_write_ahead_that_fails_refuses_the_request_with_503(store, later):
    """Whoever commits it: an optional filter's commit that carried it does not
    make the failure optional, and nothing of either write lands."""
    t = turn()
    chain = [HandsOver("ahead", store, fail=True)] + ([Commits("opt", store, required=False)]
                                                       if later != "none" else [])
    with pytest.raises(FilterError) as exc:
        Pipeline(chain).run_request(t)
    assert exc.value.status == 503 and exc.value.filter_name == "ahead"
    assert exc.value.message == "could not save the handed-over write (test)"
    assert store.sessions.get("default", "s1") is None


# -- the declared contracts: report, successor_state, on_response_id -------------------------


class Counting(Filter):
    """Keeps a count in its own state, reports it, passes half of it on to a successor,
    and remembers the response ids it heard."""

    def __init__(self, name, broken_report=False):
        self.name, self.broken_report, self.heard = name, broken_report, []

    def on_request(self, t):
        t.state[self.name] = {"requests": 1, "answers": 0}

    def report(self, t):
        if self.broken_report:
            raise ValueError("cannot report")
        return {f"{self.name}_requests": t.state[self.name]["requests"], "shared": self.name}

    def successor_state(self, st):
        return {"requests": st["requests"], "answers": 0}  # the request's part stands, the answer's is new

    def on_response_id(self, t, rid):
        self.heard.append((t.turn_id, rid))


class Silent(Filter):
    name = "silent"

    def on_request(self, t):
        t.state[self.name] = "mine alone"


def test_reports_are_keyed_by_filter_in_chain_order_and_a_failing_one_degrades():
    a, b, broken = Counting("a"), Counting("b"), Counting("broken", broken_report=True)
    t = turn()
    p = Pipeline([a, Silent(), broken, b])
    p.run_request(t)
    assert p.reports(t) == {"a": {"a_requests": 1, "shared": "a"},  # one key in two parts: neither is lost
                            "b": {"b_requests": 1, "shared": "b"}}
    assert list(p.reports(t)) == ["a", "b"]
    assert t.degraded == ["broken"]


def test_two_filters_cannot_fill_one_manifest_field():
    from ctxproxy.config import ConfigError
    from ctxproxy.filters.report import COUNTS

    class Counts(Counting):
        manifest_fields = {"redactions": COUNTS}

    with pytest.raises(ConfigError, match="a and b both report the manifest field 'redactions'"):
        Pipeline([Counts("a"), Silent(), Counts("b")])


def test_no_two_registered_filters_fill_one_manifest_field_nor_one_of_the_manifest_s_own():
    from ctxproxy.config import ConfigError
    from ctxproxy.filters import manifest_fields
    from ctxproxy.filters.manifest.filter import ManifestConfig, ManifestFilter
    from ctxproxy.filters.report import TEXT

    fields = manifest_fields()  # raises if two registered filters declare one field
    assert fields["redactions"][0] == "redact" and fields["pruned"][0] == "prune"
    assert fields["effects"][0] == "effects" and fields["task_state"][0] == "checkpoint"
    assert fields["turn_id"][0] == fields["segments"][0] == "manifest"  # the manifest's own, declared alike

    class Impostor(Counting):
        manifest_fields = {"turn_id": TEXT}

    with pytest.raises(ConfigError, match="manifest and impostor both report the manifest field 'turn_id'"):
        Pipeline([ManifestFilter(ManifestConfig(store=False, export=False)), Impostor("impostor")])


def test_a_successor_inherits_only_what_each_filter_declares():
    a = Counting("a")
    t = turn()
    p = Pipeline([a, Silent()])
    p.run_request(t)
    t.state["a"]["answers"] = 3
    t.segments.append("an offered segment")
    s = t.successor()
    assert s.turn_id != t.turn_id and s.successor_of == t.turn_id and s.pipeline is p
    assert s.state == {"a": {"requests": 1, "answers": 0}}  # "silent" declares nothing: nothing passes
    assert s.segments is t.segments and s.identity == t.identity


def test_the_response_id_reaches_every_hook_once_and_a_successor_hears_its_own():
    a = Counting("a")
    t = turn()
    p = Pipeline([a])
    p.run_request(t)
    t.note_response_id("resp_1")
    t.note_response_id("resp_again")  # the first id stands
    s = t.successor()
    s.note_response_id("resp_2")
    assert a.heard == [(t.turn_id, "resp_1"), (s.turn_id, "resp_2")]
    assert t.response_id == "resp_1" and s.response_id == "resp_2"
    assert Pipeline([a], request_only=True).id_hooks == ()  # auxiliary calls have no answer to name


def test_a_filter_that_consumes_another_s_offer_cannot_run_before_it():
    from ctxproxy.config import ConfigError
    from ctxproxy.filters.checkpoint.filter import CheckpointConfig, CheckpointFilter
    from ctxproxy.filters.effects.filter import EffectsConfig, EffectsFilter

    effects, checkpoint = EffectsFilter(EffectsConfig()), CheckpointFilter(CheckpointConfig())
    Pipeline([effects, Silent(), checkpoint])  # effects offers its ledger summary first: fine
    Pipeline([checkpoint])  # alone it lists the store's open calls itself
    with pytest.raises(ConfigError, match="checkpoint must come after effects"):
        Pipeline([checkpoint, effects])


def test_a_chain_in_the_config_that_breaks_the_order_stops_start_up(tmp_path):
    from ctxproxy.config import ConfigError, load_config
    from ctxproxy.proxy.engine import engine_for

    toml = tmp_path / "ctxproxy.toml"
    toml.write_text('[pipeline]\nrequest = ["identify", "checkpoint", "effects"]\n')
    with pytest.raises(ConfigError, match="checkpoint must come after effects"):
        engine_for(load_config(toml, data_dir=str(tmp_path / "data")), Services())


# -- staged write-aheads (Turn.commit_staged): the next filters run during the fsync ----------


class Gated:
    """A store whose commits wait for ``gate`` (and then fail, with ``fail``): what
    the filters after a staged write-ahead do while its batch syncs shows."""

    def __init__(self, store, fail=False):
        self.store, self.fail, self.gate = store, fail, threading.Event()

    @contextlib.contextmanager
    def batch(self):
        with self.store.batch() as b:
            yield b
            assert self.gate.wait(30), "nothing released the commit"
            if self.fail:
                raise StoreError("disk full at the fsync (test)")


class Staged(Records):
    """Writes a record staged (``commit_staged``) and edits the body with its result."""

    async def on_request(self, t):
        def write(b):
            b.sessions.update("default", "s1", {self.name: "on disk"})
            return self.name

        result = await t.commit_staged(self, self.store, write, "could not save (test)")
        t.state.setdefault("order", []).append(f"{result} staged")
        t.request.add_turn_segment(f"[{result}]")


class Opens(Filter):
    """Lets the gated commit go, noting whether the staged record was on disk yet."""

    name = "opens"

    def __init__(self, store, gated):
        self.store, self.gated = store, gated

    def on_request(self, t):
        t.state.setdefault("order", []).append(f"opens, on disk: {self.store.sessions.get('default', 's1')}")
        t.request.add_turn_segment("O")
        self.gated.gate.set()


async def test_a_staged_write_ahead_lets_the_next_filters_run_and_is_on_disk_before_the_request_leaves(store):
    gated = Gated(store)
    writer = BackgroundWriter(gated)
    try:
        t = turn()
        t.services = Services(store=store, writer=writer)
        await Pipeline([Staged("rec", store), Opens(store, gated)]).run_request_async(t)
        # the next filter ran while the batch waited to commit, and the request filters ended once it had
        assert t.state["order"] == ["rec staged", "opens, on disk: None"]
        assert store.sessions.get("default", "s1") == {"rec": "on disk"} and not t.staging
        assert orjson.loads(t.request.to_bytes())["messages"][0]["content"].endswith("[rec]\n\nO")
        assert "rec" in t.timings_ms
    finally:
        gated.gate.set()
        writer.close()


@pytest.mark.parametrize("required", [False, True])
async def test_a_staged_write_ahead_that_does_not_commit_undoes_its_filter_or_refuses(store, required):
    """Its edits stand on records that never reached the disk: an optional
    filter's are undone (the request filters run again without it), a required
    one refuses the request."""
    gated = Gated(store, fail=True)
    writer = BackgroundWriter(gated)
    try:
        t = turn()
        t.services = Services(store=store, writer=writer)
        chain = Pipeline([Staged("rec", store, required=required), Opens(store, gated)])
        run = chain.run_request_async(t, reparse=lambda: ADAPTERS["chat"].parse_request(RAW))
        if required:
            with pytest.raises(FilterError) as exc:
                await run
            assert exc.value.status == 503 and exc.value.message == "could not save (test)"
        else:
            await run
            assert t.degraded == ["rec"] and t.state["order"] == ["opens, on disk: None"]
            content = orjson.loads(t.request.to_bytes())["messages"][0]["content"]
            assert "[rec]" not in content and content.endswith("O")
        assert store.sessions.get("default", "s1") is None
    finally:
        gated.gate.set()
        writer.close()


def test_a_staged_write_ahead_without_a_writer_commits_before_the_next_filter(store):
    t = turn()
    Pipeline([Staged("rec", store), Append("after", "A")]).run_request(t)
    assert t.state["order"] == ["rec staged", "after"] and not t.staging
    assert store.sessions.get("default", "s1") == {"rec": "on disk"}


class Raced(Gated):
    """A store whose first commit loses a race with another process (``StoreConflict``):
    the writer runs the batch again, after ``meanwhile`` (the other process's write)."""

    def __init__(self, store, meanwhile=None):
        super().__init__(store)
        self.lost, self.meanwhile, self.batches = False, meanwhile, 0

    @contextlib.contextmanager
    def batch(self):
        self.batches += 1
        if self.lost and self.meanwhile is not None:
            self.meanwhile()
        with self.store.batch() as b:
            yield b
            assert self.gate.wait(30), "nothing released the commit"
            if not self.lost:
                self.lost = True
                raise StoreConflict("another process wrote these rows first (test)")


class Reads(Records):
    """Stages a write whose result is what it read of the store (as prune's is: the
    decisions another worker made first), and edits the body with it."""

    def __init__(self, name, store):
        super().__init__(name, store, required=False)

    async def on_request(self, t):
        def write(b):
            seen = b.sessions.get("default", "s1") or {}
            b.sessions.update("default", "s1", {self.name: "on disk"})
            return seen.get("other", "nobody")

        result = await t.commit_staged(self, self.store, write)
        t.state.setdefault("order", []).append(f"staged, read {result}")
        t.request.add_turn_segment(f"[{result}]")


@pytest.mark.parametrize("meanwhile", [False, True])
async def test_a_staged_write_ahead_run_again_stands_only_if_it_read_the_same(store, meanwhile):
    """The batch ran again after a lost race: if its second run read what the first
    did, the edits made on the first stand; otherwise they are undone (the request
    filters run again without the filter)."""
    raced = Raced(store, (lambda: store.sessions.update("default", "s1", {"other": "the other worker"}))
                  if meanwhile else None)
    writer = BackgroundWriter(raced)
    try:
        t = turn()
        t.services = Services(store=store, writer=writer)
        chain = Pipeline([Reads("rec", store), Opens(store, raced)])
        await chain.run_request_async(t, reparse=lambda: ADAPTERS["chat"].parse_request(RAW))
        content = orjson.loads(t.request.to_bytes())["messages"][0]["content"]
        assert raced.batches == 2 and store.sessions.get("default", "s1")["rec"] == "on disk"
        if meanwhile:
            assert t.degraded == ["rec"] and "[nobody]" not in content and content.endswith("O")
        else:
            assert not t.degraded and content.endswith("[nobody]\n\nO")
    finally:
        raced.gate.set()
        writer.close()
