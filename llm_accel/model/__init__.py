"""This project's numpy golden models, written from the stream formats in docs/streams.md, never from
the RTL. A design names one in design.yaml (`verify: {model: "llm_accel.model.frames:ternary_stimulus"}`),
the door any project's model uses.

They import numpy and kabe.verify (the model API) only: kabe's board runner pushes them, with
kabe/verify.py, to the board and runs them there.
"""
