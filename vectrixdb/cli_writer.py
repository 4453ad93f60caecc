"""`vectrixdb writer check`: is the chat model the settings name really there, and what does it say?

Registered in cli/commands.py as a sub-command group (`app.add_typer(writer_app, name="writer")`).
"""
from __future__ import annotations

from typing import Optional

import typer

from vectrixdb.errors import VectrixError

writer_app = typer.Typer(help="The chat model that drafts questions and judges answers.", no_args_is_help=True)



@writer_app.callback()
def writer() -> None:
    """The chat model that drafts questions and judges answers (one command keeps its group)."""


_PROMPT = [{"role": "user", "content": "Reply with the single word: ready"}]


def _fail(message: str) -> None:
    typer.secho(f"error: {message}", fg="red", err=True)
    raise typer.Exit(1)


@writer_app.command()
def check(url: Optional[str] = typer.Option(None, help="full chat completions URL (default: from the settings)"),
          model: Optional[str] = typer.Option(None, help="model name, with --url"),
          key: Optional[str] = typer.Option(None, help="key, with --url"),
          key_header: Optional[str] = typer.Option(None, help="header for the key, with --url (default: bearer)"),
          max_tokens: int = typer.Option(16, help="the longest reply to ask for")):
    """Print the route and model (key masked), make one small call and print what came back."""
    from vectrixdb.chat.writer import ChatWriter

    try:
        writer = (ChatWriter(url, model=model, key=key, key_header=key_header, max_retries=1) if url
                  else ChatWriter.from_environment(max_retries=1))
    except VectrixError as exc:
        _fail(str(exc))
    about = writer.describe()
    typer.echo(f"route:   {about['route']}")
    typer.echo(f"model:   {about['model']}")
    typer.echo(f"auth:    {about['auth']}")
    try:
        outcome = writer.ask(_PROMPT, max_tokens=max_tokens)
    except VectrixError as exc:
        _fail(str(exc))
    if outcome.status == "error":
        _fail(outcome.reason or "the call failed")
    typer.echo(f"reply:   {(outcome.raw or '').strip()!r} ({outcome.status})")
    typer.echo(f"tokens:  {outcome.prompt_tokens} prompt + {outcome.completion_tokens} completion")
    typer.echo(f"calls:   {outcome.calls} HTTP request(s) sent, retries included; {outcome.answers} answer(s)")
    typer.echo(f"seconds: {outcome.seconds:.2f}")
