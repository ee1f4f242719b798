"""The mechanics notation of the players' rules (issue 26): its grammar, keywords and parser.

`read(text, language)` finds a proposal's block (the lines from `MECHANICS` / `MECCANICA` to
the end) and reads it into `referee.core.program`'s tree, or says where it is not the notation.
"""

from referee.notation.parser import read, read_block, split

__all__ = ["read", "read_block", "split"]
