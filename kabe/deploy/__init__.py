"""Deploy to the board: push bitstream + runner over SSH, run the numpy verification there, archive the result."""
