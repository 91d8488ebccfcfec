"""Shell completion of option values and arguments (click's protocol, bash/zsh/fish).

`ragit completion <shell>` prints click's script; on TAB the shell runs `ragit` with
``_RAGIT_COMPLETE`` set and click asks each parameter for its candidates. These callbacks
give them: the values of enum options (``--scope``, ``--view``, ``--format``, ``--type``…),
config keys (``ragit config set retr⇥``), the values a config key takes (its literals,
``true``/``false`` for a boolean), the shells of ``completion``, and command words for
``describe``. They import nothing heavy except for a config value (the typed config).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # click.shell_completion is imported only when a shell asks
    import click

Completer = Callable[["click.Context", "click.Parameter", str], list[Any]]


def _items(values: Iterable[str], kind: str = "plain") -> list[Any]:
    from click.shell_completion import CompletionItem

    return [CompletionItem(v, type=kind) for v in values]


def values(choices: Iterable[str]) -> Completer:
    """Complete from a fixed list of values."""
    fixed = tuple(choices)

    def complete(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
        return _items(v for v in fixed if v.startswith(incomplete))

    return complete


def paths(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """Let the shell complete a file or directory name."""
    return _items([incomplete], "file")


def config_keys(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """`section.key` names of .ragit/config.toml."""
    from ragit.contract.command_spec import CONFIG_KEYS

    return _items(k for k in CONFIG_KEYS if k.startswith(incomplete))


def config_values(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """The values the key being set takes, when it takes a fixed set (literals, booleans)."""
    import typing

    key = str(ctx.params.get("key") or "")
    section, _, name = key.partition(".")
    from ragit.config import SECTIONS

    model = SECTIONS.get(section)
    field = model.model_fields.get(name) if model is not None else None
    if field is None:
        return []
    found: list[str] = []

    def walk(annotation: Any) -> None:
        if annotation is bool:
            found.extend(("true", "false"))
        elif typing.get_origin(annotation) is typing.Literal:
            found.extend(str(a) for a in typing.get_args(annotation))
        else:
            for arg in typing.get_args(annotation):
                walk(arg)

    walk(field.annotation)
    return _items(v for v in dict.fromkeys(found) if v.startswith(incomplete))


def command_words(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """The next word of a command path (`ragit describe memory pro⇥`)."""
    from ragit.contract.registry import COMMANDS

    given = tuple(ctx.params.get("command") or ())
    words = {
        spec.words[len(given)]
        for spec in COMMANDS
        if len(spec.words) > len(given) and spec.words[: len(given)] == given
    }
    return _items(w for w in sorted(words) if w.startswith(incomplete))


# Completers of arguments, by "<command path> <argument name>".
ARGUMENTS: dict[str, Completer] = {
    "config set key": config_keys,
    "config set value": config_values,
    "config get key": config_keys,
    "completion shell": values(("bash", "zsh", "fish")),
    "describe command": command_words,
}
