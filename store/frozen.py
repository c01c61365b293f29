"""Read-only forms of decoded JSON, for records one process hands to many turns.

``freeze`` turns what ``orjson.loads`` made (dicts, lists, scalars) into
``FrozenDict`` and ``FrozenList``: subclasses of ``dict`` and ``list``, so
they compare equal to plain ones, pass ``isinstance`` checks and encode with
orjson as before, but every method that would change them in place raises
``TypeError``. A reader that wants to change what it read copies it
(``dict(d)``, ``list(x)``: a plain top level) or thaws it (``thaw``, or
``copy.deepcopy``: plain all the way down). A nested in-place change that
would have leaked into the next turn's copy fails loudly instead.
"""
from __future__ import annotations

from typing import Any


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError(f"{type(self).__name__} is read-only (shared between turns): copy it to change it")


class FrozenDict(dict):
    # A weak reference tells a turn its session's record is the very one it read before
    # (``filters/turn_summary.session_records``) without keeping it alive.
    __slots__ = ("__weakref__",)
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: Any) -> dict:
        return thaw(self)

    def __reduce__(self) -> Any:
        return (thaw, (dict(self),))


class FrozenList(list):
    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __iadd__ = __imul__ = _refuse

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: Any) -> list:
        return thaw(self)

    def __reduce__(self) -> Any:
        return (thaw, (list(self),))


def freeze(obj: Any) -> Any:
    """The read-only form of ``obj`` (what ``orjson.loads`` makes), all the way down:
    each container copied at C speed, then only its containers replaced."""
    t = type(obj)
    if t is dict or t is FrozenDict:
        out = FrozenDict(obj)
        for k, v in obj.items():
            tv = type(v)
            if tv is dict or tv is list or tv is tuple:
                _set_item(out, k, freeze(v))
        return out
    if t is list or t is FrozenList or t is tuple:
        out = FrozenList(obj)
        i = 0
        for v in obj:
            tv = type(v)
            if tv is dict or tv is list or tv is tuple:
                _set_index(out, i, freeze(v))
            i += 1
        return out
    return obj


_set_item = dict.__setitem__
_set_index = list.__setitem__
def decoded_bytes(raw: bytes) -> int:
    """An over-estimate of what the decoded (and frozen) form of the JSON ``raw``
    holds, from counts made at C speed: each object's dict (~200 bytes small),
    each array's list, each string's header, each value's slot and number."""
    return (2 * len(raw) + 220 * raw.count(b"{") + 100 * raw.count(b"[") + 30 * raw.count(b'"')
            + 40 * raw.count(b",") + 64)


def thaw(obj: Any) -> Any:
    """A plain, mutable copy of ``obj`` all the way down."""
    if isinstance(obj, dict):
        return {k: thaw(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [thaw(v) for v in obj]
    return obj
