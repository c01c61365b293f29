"""Two test filters for the hooks that only watch the answer: ``Shout`` edits
(upper-cases the answer's text, streamed or whole), ``Watch`` only reads
(``watches_events``: notes the text it saw under its name, and at the turn's
end all of it under ``at_end``)."""
from ctxproxy.filters.base import Filter
from ctxproxy.filters.view import TEXT


class Shout(Filter):
    name = "shout"

    def on_response_event(self, t, ev):
        for d in ev.deltas():
            d.text = d.text.upper()

    def on_response(self, t, view):
        for s in view.text_slots():
            if s.kind == TEXT:
                s.set(s.get().upper())


class Watch(Filter):
    watches_events = True

    def __init__(self, name="watch", required=False):
        self.name, self.required = name, required

    def on_response_event(self, t, ev):
        t.state.setdefault(self.name, []).extend(d.text for d in ev.deltas() if d.kind == "text")

    def on_response(self, t, view):
        t.state.setdefault(self.name, []).extend(s.get() for s in view.text_slots() if s.kind == TEXT)

    def on_response_end(self, t):
        t.state["at_end"] = "".join(t.state.get(self.name, []))
