"""The commands' ``--help``: one module per command, holding its long HELP text and the
declarations of its own options (names, metavars, help lines), so that the command module is
left with the adaptation only (issue 33: "every front ≤ 200 lines").

A command module imports its HELP and options from here and sets ``command.__doc__ = HELP``;
what ``textdp CMD --help`` prints is unchanged by where the text lives.
"""
