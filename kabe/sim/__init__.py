"""Streaming simulation: one Verilator harness for every design, and its runner."""
