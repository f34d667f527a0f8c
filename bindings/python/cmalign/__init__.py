"""cmalign: will the kernel accept this device tree's CMA reservations?

Every function returns what ``cmalign COMMAND --format json`` prints, as plain dicts and lists,
and raises :class:`Error` on a bad request (an unknown keyword, a value of the wrong type, an
unusable configuration) or when no input could be read. One unreadable board among several is
not a bad request: it is an input error in ``"diagnostics"`` beside the other boards' findings,
as in the CLI's JSON. Findings are data, not exceptions.

The functions, their keywords, signatures and docstrings are built from the library's command
definitions (``cmalign/internal/commands.hpp``), the same table the CLI, the C API's JSON request reader
and the documentation come from. Paths may be ``str`` or ``os.PathLike``; a keyword that takes a
list also takes a single value.
"""
import difflib as _difflib
import inspect as _inspect
import json as _json
import os as _os
import re as _re

from . import _cmalign

__version__ = _cmalign.__version__

_DEFINITIONS = _json.loads(_cmalign.definitions())


class Error(ValueError):
    """Bad input. ``str(error)`` is ``"file:line:col: error: message"`` as the CLI prints it;
    ``file``, ``line`` and ``column`` hold the location (``line``/``column`` None when unknown).
    """

    def __init__(self, message):
        super().__init__(message)
        self.file = None
        self.line = None
        self.column = None
        match = _re.match(r"^(.*?):(?:(\d+):(?:(\d+):)?)? (?:error|warning|note): ", message)
        if match and match.group(1) != "cmalign":
            self.file = match.group(1)
            self.line = int(match.group(2)) if match.group(2) else None
            self.column = int(match.group(3)) if match.group(3) else None


class KeywordError(Error, TypeError):
    """An unknown keyword or a missing argument: a :class:`Error` that is also the
    ``TypeError`` Python raises for a bad call."""


def _plain(value):
    if isinstance(value, _os.PathLike):
        return _os.fspath(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        # {"vm.lowmem_reserve_ratio": [256, 32]}: a list value as the words of one setting
        return {str(k): " ".join(str(x) for x in v) if isinstance(v, (list, tuple)) else _plain(v)
                for k, v in value.items()}
    return value


def _api_options(definition):
    return [o for o in definition["options"] if o["surface"] != "cli"]


def _parameters(definition):
    """Positional inputs (and required values) first, in the definition's order, then the rest;
    every parameter defaults to None: what is required is checked by the library, in the
    request's words."""
    options = _api_options(definition)
    first = [o for o in options if o["positional"] or o["required"]]
    rest = [o for o in options if o not in first]
    return ([_inspect.Parameter(o["key"], _inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
             for o in first] +
            [_inspect.Parameter(o["key"], _inspect.Parameter.KEYWORD_ONLY, default=None)
             for o in rest])


def _docstring(definition):
    lines = [definition["summary"][0].upper() + definition["summary"][1:] + ".", "",
             f"Returns the ``cmalign {definition['name']} --format json`` object.", ""]
    for o in _api_options(definition):
        kind = {"flag": "bool", "count": "int", "size": "int or str (\"4M\")",
                "assignment": "dict or list of \"NAME=VALUE\"", "switch": "list of str"}.get(
                    o["type"], "str or path" if o["type"] in ("path", "directory") else "str")
        if o["repeatable"] and o["type"] not in ("assignment", "switch"):
            kind = f"list of {kind} (or one)"
        extra = []
        if o["required"]:
            extra.append("required")
        if o["default"]:
            extra.append(f"default {o['default']}")
        if o["choices"]:
            extra.append("one of " + ", ".join(o["choices"].split(",")))
        flag = f"; command line {o['flags'].replace(',', ', ')}" if o["flags"] else ""
        more = f" ({'; '.join(extra)})" if extra else ""
        lines.append(f"{o['key']}: {kind}{more}{flag}: {o['help']}.")
    return "\n".join(lines)


def _python_name(definition):
    """The function of a command: its name with '_' for '-' (boot-check -> boot_check)."""
    return definition["name"].replace("-", "_")


def _command(definition):
    name = _python_name(definition)
    signature = _inspect.Signature(_parameters(definition))
    valid = [p.name for p in signature.parameters.values()]

    def run(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            unknown = [k for k in kwargs if k not in valid]

            def named(key):
                near = _difflib.get_close_matches(key, valid, n=1)
                return f"'{key}'" + (f" (did you mean '{near[0]}'?)" if near else "")
            what = (f"unknown keyword{'s' if len(unknown) > 1 else ''} "
                    + ", ".join(named(k) for k in unknown) if unknown else str(error))
            raise KeywordError(f"cmalign: error: {name}: {what}; valid keywords: "
                               + ", ".join(valid)) from None
        request = {k: _plain(v) for k, v in bound.arguments.items() if v is not None}
        result, error = _cmalign.run(name, _json.dumps(request))
        if error is not None:
            raise Error(error)
        return _json.loads(result)

    run.__name__ = run.__qualname__ = name
    run.__signature__ = signature
    run.__doc__ = _docstring(definition)
    run.__module__ = __name__
    return run


for _definition in _DEFINITIONS:
    globals()[_python_name(_definition)] = _command(_definition)

def clear_caches():
    """Drops what the library keeps between calls (the parsed kernel trees; at most a few)."""
    _cmalign.clear_caches()


__all__ = (["Error", "KeywordError", "clear_caches", "__version__"] +
           [_python_name(d) for d in _DEFINITIONS])

_STUB_TYPES = {
    "flag": "bool", "text": "str", "path": "_Path", "directory": "_Path", "size": "_Size",
    "count": "int", "assignment": "_Assignments", "choice": "str", "switch": "str",
}


def _stub_text():
    """The type stubs (``__init__.pyi``) for these functions, from the definitions: the build
    writes them, and a test fails when the committed copy is stale."""
    out = ["# Generated from the command definitions (cmalign/internal/commands.hpp) by",
           "# cmalign._stub_text(); do not edit.",
           "import os",
           "from typing import Any, Mapping, Optional, Sequence, Union",
           "",
           '_Path = Union[str, "os.PathLike[str]"]',
           "_Size = Union[int, str]",
           "_Assignments = Union[Mapping[str, Union[str, int, bool, None, Sequence[int]]], Sequence[str]]",
           "_Json = dict[str, Any]",
           "",
           "__version__: str",
           "",
           "class Error(ValueError):",
           "    file: Optional[str]",
           "    line: Optional[int]",
           "    column: Optional[int]",
           "    def __init__(self, message: str) -> None: ...",
           "",
           "class KeywordError(Error, TypeError): ...",
           "",
           "def clear_caches() -> None: ...",
           ""]
    for definition in _DEFINITIONS:
        by_key = {o["key"]: o for o in _api_options(definition)}
        params = []
        keyword_only = False
        for p in _parameters(definition):
            o = by_key[p.name]
            kind = _STUB_TYPES[o["type"]]
            if o["repeatable"] and o["type"] not in ("assignment",):
                kind = f"Union[{kind}, Sequence[{kind}]]"
            if p.kind == _inspect.Parameter.KEYWORD_ONLY and not keyword_only:
                params.append("*")
                keyword_only = True
            params.append(f"{p.name}: Optional[{kind}] = ...")
        out.append(f"def {_python_name(definition)}(")
        out.extend(f"    {p}," for p in params)
        out.append(") -> _Json: ...")
    return "\n".join(out) + "\n"
