"""The package's one exception type."""


class Error(Exception):
    """Everything this package refuses or that fails: a compile (the message is sdfc's
    diagnostics), a binding (``argument`` names the argument when one is at fault), a refused call
    or initialization (the message is the program's own), a workspace or stream the program
    rejects."""

    def __init__(self, message, argument=None):
        super().__init__(message)
        #: The name of the argument at fault, or ``None``.
        self.argument = argument
