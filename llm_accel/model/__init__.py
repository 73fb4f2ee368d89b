"""numpy golden models, written from the stream formats in docs/streams.md, never from the RTL.

The board-side runner imports this package and nothing else from kabe, so it must stay
numpy-only.
"""
