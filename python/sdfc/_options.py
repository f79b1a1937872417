"""sdfc's compile options as the compiler lists them (``sdfc options --json``).

The command line, the C++ library API and this package read one table (ir/Options.h in sdfc's
source): a value sdfc takes is taken here, and an option sdfc gains is passed through without a
change here.
"""

import functools
import json
import os
import subprocess

from ._errors import Error


@functools.lru_cache(maxsize=None)
def _table(executable, size, mtime_ns):
    command = [executable, "options", "--json"]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise Error(
            f"{executable} does not list its options (`sdfc options --json` exited with {result.returncode}): "
            f"{result.stderr.strip()}; is it an sdfc older than this Python package?"
        )
    return {row["name"]: row for row in json.loads(result.stdout)}


def option_table(executable):
    """The options of the sdfc at ``executable``: name -> its row (``flag``, ``kind``, ``values``,
    ``switch``, ``default``, ``help``), in sdfc's order. Read once per executable file."""
    st = os.stat(executable)
    return _table(os.path.realpath(executable), st.st_size, st.st_mtime_ns)


def check_option(table, name, value):
    """Raises :class:`Error` when sdfc does not take ``value`` for option ``name`` (``None``
    stands for sdfc's default and is always taken)."""
    row = table.get(name)
    if row is None:
        raise Error(f"unknown sdfc option {name!r}; sdfc's options are {', '.join(table)}")
    if value is None:
        return
    kind = row["kind"]
    if kind == "switch" and not isinstance(value, bool):
        raise Error(f"{name} must be True or False, not {value!r}")
    if kind == "choice" and value not in row["values"]:
        raise Error(f"{name} must be one of {', '.join(map(repr, row['values']))} or None, not {value!r}")
    if kind == "number" and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise Error(f"{name} must be an integer of 0 or more, not {value!r}")
    if kind == "text" and not isinstance(value, str):
        raise Error(f"{name} must be a string, not {value!r}")


def command_options(executable, values):
    """sdfc's command-line options for ``values`` (option name -> value; ``None``, or a switch
    at its default, passes nothing), in sdfc's order. Raises :class:`Error` for an unknown name
    or a value sdfc does not take."""
    table = option_table(executable)
    for name, value in values.items():
        check_option(table, name, value)
    options = []
    for name, row in table.items():
        value = values.get(name)
        if value is None:
            continue
        if row["kind"] == "switch":
            if str(value).lower() == row["switch"]:
                options.append(row["flag"])
        else:
            options += [row["flag"], str(value)]
    return options
