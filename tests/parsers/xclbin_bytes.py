"""Writes a small .xclbin in XRT's axlf layout (xclbin.h), for tests of kabe.parsers.xclbin and for
a v++ stand-in: the header, IP_LAYOUT (kernels) and CLOCK_FREQ_TOPOLOGY (clocks) sections."""

from __future__ import annotations

import struct


def build(kernels=("vadd",), clocks=(("DATA_CLK", 1, 300), ("KERNEL_CLK", 2, 500)),
          vbnv="xilinx_u250_gen3x16_xdma_4_1_202210_1", uuid=bytes(range(16)), timestamp=1700000000,
          unique_id=b"\x01\x02\x03\x04\x05\x06\x07\x08") -> bytes:
    ip = struct.pack("<i4x", len(kernels)) + b"".join(
        struct.pack("<IIQ64s", 1, 0, 0x1800000 + 0x10000 * k, f"{name}:{name}_1".encode()) for k, name in enumerate(kernels))
    clk = struct.pack("<h", len(clocks)) + b"".join(
        struct.pack("<HB5x128s", mhz, typ, name.encode()) for name, typ, mhz in clocks)
    sections = [(8, b"ip_layout", ip), (11, b"clock_freq_topology", clk)] if clocks is not None else [(8, b"ip_layout", ip)]
    prefix = 304
    head_end = prefix + 152 + 40 * len(sections)
    offsets, body, off = [], b"", head_end
    for _, _, data in sections:
        pad = (-off) % 8
        body += b"\x00" * pad
        off += pad
        offsets.append(off)
        body += data
        off += len(data)
    total = head_end + len(body)
    out = b"xclbin2\x00" + struct.pack("<i", -1) + b"\xff" * 28 + b"\x00" * 256 + unique_id
    out += struct.pack("<QQQHBBHH16s64s16s16sI4x", total, timestamp, 0, 0, 2, 1, 0, 0, b"\x00" * 16, vbnv.encode(),
                       uuid, b"", len(sections))
    for (kind, name, data), o in zip(sections, offsets):
        out += struct.pack("<I16s4xQQ", kind, name, o, len(data))
    return out + body
