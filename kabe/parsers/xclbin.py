"""An .xclbin read in pure Python: its axlf header and sections, as XRT's public xclbin.h lays them out.

Layout (little-endian; sizes are the static asserts in xclbin.h):
  struct axlf (304 bytes before the header): char m_magic[8] "xclbin2\\0"; int32 m_signature_length;
    uchar reserved[28]; uchar m_keyBlock[256]; uint64 m_uniqueId;
  struct axlf_header (152 bytes): uint64 m_length, m_timeStamp, m_featureRomTimeStamp;
    uint16 m_versionPatch; uint8 m_versionMajor, m_versionMinor; uint16 m_mode, m_actionMask;
    uchar m_interface_uuid[16]; uchar m_platformVBNV[64]; uuid[16] (the xclbin's UUID);
    char m_debug_bin[16]; uint32 m_numSections (+4 padding)
  struct axlf_section_header[m_numSections] (40 bytes each): uint32 m_sectionKind;
    char m_sectionName[16]; (4 padding) uint64 m_sectionOffset, m_sectionSize
Sections decoded here:
  IP_LAYOUT (8): int32 m_count; ip_data[80]: uint32 m_type (1 = IP_KERNEL), uint32 properties,
    uint64 m_base_address, char m_name[64] ("kernel:{instance}")
  CLOCK_FREQ_TOPOLOGY (11): int16 m_count; clock_freq[136] at offset 2: uint16 m_freq_Mhz,
    uint8 m_type (1 DATA, 2 KERNEL, 3 SYSTEM), uchar m_unused[5], char m_name[128]
  DEBUG_IP_LAYOUT (9) and MEM_TOPOLOGY (6): their m_count only (mem banks: tag and used flag).

Record:
  magic, bytes, length (m_length), version "2.x.y", mode, timestamp, unique_id (m_uniqueId's bytes,
  hex), uuid (hex, 32 digits), interface_uuid, platform_vbnv, num_sections,
  sections [{"kind", "name", "kind_name", "offset", "size"}],
  kernels ["name", ...] (IP_KERNEL entries of IP_LAYOUT, the part before ':'), ip_layout [...],
  clocks [{"name", "type", "freq_mhz"}] ([] without a CLOCK_FREQ_TOPOLOGY section),
  has_clock_freq_topology, mem_banks [{"tag", "used"}], debug_ip_count

Refused (ReportError): another magic, a file shorter than its header or than m_length says, a
section that points outside the file, more sections than XCLBIN_MAX_NUM_SECTION.
"""

from __future__ import annotations

import struct

from kabe.parsers import ReportError

MAGIC = b"xclbin2\x00"
MAX_SECTIONS = 0x10000
_AXLF_PREFIX = 8 + 4 + 28 + 256 + 8  # magic, signature length, reserved, key block, unique id
_HEADER = struct.Struct("<QQQHBBHH16s64s16s16sI4x")
_SECTION = struct.Struct("<I16s4xQQ")
assert _HEADER.size == 152 and _SECTION.size == 40  # xclbin.h's static asserts

KIND_NAMES = {0: "BITSTREAM", 1: "CLEARING_BITSTREAM", 2: "EMBEDDED_METADATA", 3: "FIRMWARE", 4: "DEBUG_DATA",
              5: "SCHED_FIRMWARE", 6: "MEM_TOPOLOGY", 7: "CONNECTIVITY", 8: "IP_LAYOUT", 9: "DEBUG_IP_LAYOUT",
              10: "DESIGN_CHECK_POINT", 11: "CLOCK_FREQ_TOPOLOGY", 12: "MCS", 13: "BMC", 14: "BUILD_METADATA",
              15: "KEYVALUE_METADATA", 16: "USER_METADATA", 17: "DNA_CERTIFICATE", 18: "PDI",
              19: "BITSTREAM_PARTIAL_PDI", 20: "PARTITION_METADATA", 21: "EMULATION_DATA", 22: "SYSTEM_METADATA",
              23: "SOFT_KERNEL", 24: "ASK_FLASH", 25: "AIE_METADATA", 26: "ASK_GROUP_TOPOLOGY",
              27: "ASK_GROUP_CONNECTIVITY", 28: "SMARTNIC", 29: "AIE_RESOURCES", 30: "OVERLAY",
              31: "VENDER_METADATA", 32: "AIE_PARTITION", 33: "IP_METADATA", 34: "AIE_RESOURCES_BIN",
              35: "AIE_TRACE_METADATA"}
CLOCK_TYPES = {0: "UNUSED", 1: "DATA", 2: "KERNEL", 3: "SYSTEM"}
IP_KERNEL = 1
MODES = {0: "FLAT", 1: "PR", 2: "TANDEM_STAGE2", 3: "TANDEM_STAGE2_WITH_PR", 4: "HW_EMU", 5: "SW_EMU", 6: "HW_EMU_PR"}


def is_xclbin(head: bytes) -> bool:
    return head.startswith(MAGIC)


def _cstr(b: bytes) -> str:
    return b.split(b"\x00", 1)[0].decode("utf-8", errors="replace")


def parse_bytes(data: bytes, source: str) -> dict:
    if not data.startswith(MAGIC):
        raise ReportError(f"{source}: does not start with the magic 'xclbin2'; not an xclbin (or a legacy xclbin0)")
    need = _AXLF_PREFIX + _HEADER.size
    if len(data) < need:
        raise ReportError(f"{source}: {len(data)} bytes, shorter than the {need}-byte axlf header; the file is cut")
    (unique_id,) = struct.unpack_from("<8s", data, _AXLF_PREFIX - 8)
    (length, ts, _rom_ts, patch, major, minor, mode, _action, iface, vbnv, uuid, _debug_bin,
     nsec) = _HEADER.unpack_from(data, _AXLF_PREFIX)
    (sig_len,) = struct.unpack_from("<i", data, 8)
    # xclbinutil --sign appends the signature after the m_length bytes it signed
    if length != len(data) and not (sig_len > 0 and length + sig_len == len(data)):
        raise ReportError(f"{source}: the header says {length} bytes, the file has {len(data)}; the file is cut or "
                          f"has bytes joined to it")
    if nsec > MAX_SECTIONS or need + nsec * _SECTION.size > len(data):
        raise ReportError(f"{source}: the header lists {nsec} sections, more than the file can hold; damaged xclbin")
    rec = {"magic": "xclbin2", "bytes": len(data), "length": length, "signature_length": sig_len, "version": f"{major}.{minor}.{patch}",
           "mode": MODES.get(mode, str(mode)), "timestamp": ts, "unique_id": unique_id.hex(), "uuid": uuid.hex(),
           "interface_uuid": iface.hex(), "platform_vbnv": _cstr(vbnv), "num_sections": nsec, "sections": [],
           "kernels": [], "ip_layout": [], "clocks": [], "has_clock_freq_topology": False, "mem_banks": [],
           "debug_ip_count": None}
    for k in range(nsec):
        kind, name, off, size = _SECTION.unpack_from(data, need + k * _SECTION.size)
        if off + size > len(data):
            raise ReportError(f"{source}: section {k} ({KIND_NAMES.get(kind, kind)}) points past the end of the file "
                              f"(offset {off:#x}, size {size:#x}); the file is cut")
        rec["sections"].append({"kind": kind, "kind_name": KIND_NAMES.get(kind, f"UNKNOWN_{kind}"), "name": _cstr(name),
                                "offset": off, "size": size})
        body = data[off:off + size]
        if kind == 8:
            _ip_layout(body, rec, source)
        elif kind == 11:
            rec["has_clock_freq_topology"] = True
            _clocks(body, rec, source)
        elif kind == 6:
            _mem(body, rec, source)
        elif kind == 9 and len(body) >= 2:
            rec["debug_ip_count"] = struct.unpack_from("<H", body)[0]
    return rec


def _count(body: bytes, fmt: str, item: int, start: int, what: str, source: str) -> int:
    if len(body) < struct.calcsize(fmt):
        raise ReportError(f"{source}: the {what} section is {len(body)} bytes, too short for its count")
    (n,) = struct.unpack_from(fmt, body)
    if n < 0 or start + n * item > len(body):
        raise ReportError(f"{source}: the {what} section counts {n} entries, more than its {len(body)} bytes hold")
    return n


def _ip_layout(body: bytes, rec: dict, source: str) -> None:
    n = _count(body, "<i", 80, 8, "IP_LAYOUT", source)
    for k in range(n):
        typ, props, base, name = struct.unpack_from("<IIQ64s", body, 8 + 80 * k)
        nm = _cstr(name)
        rec["ip_layout"].append({"type": typ, "name": nm, "base_address": base, "properties": props})
        kernel = nm.split(":", 1)[0]
        if typ == IP_KERNEL and kernel not in rec["kernels"]:
            rec["kernels"].append(kernel)


def _clocks(body: bytes, rec: dict, source: str) -> None:
    n = _count(body, "<h", 136, 2, "CLOCK_FREQ_TOPOLOGY", source)
    for k in range(n):
        freq, typ, name = struct.unpack_from("<HB5x128s", body, 2 + 136 * k)
        rec["clocks"].append({"name": _cstr(name), "type": CLOCK_TYPES.get(typ, str(typ)), "freq_mhz": freq})


def _mem(body: bytes, rec: dict, source: str) -> None:
    n = _count(body, "<i", 40, 8, "MEM_TOPOLOGY", source)
    for k in range(n):
        _typ, used, tag = struct.unpack_from("<BB6x8x8x16s", body, 8 + 40 * k)
        rec["mem_banks"].append({"tag": _cstr(tag), "used": bool(used)})


def kernel_clock_mhz(rec: dict) -> float | None:
    """The frequency the xclbin runs its kernels at: its KERNEL clock (the DATA clock of older
    platforms when no KERNEL clock is listed); None when it has no clock topology."""
    for want in ("KERNEL", "DATA"):
        for c in rec.get("clocks") or []:
            if c["type"] == want:
                return float(c["freq_mhz"])
    return None


def parse_file(path) -> dict:
    from kabe.parsers.vitis_common import read_bytes

    data, source = read_bytes(path)
    return parse_bytes(data, source)


def metrics(rec: dict, link_log: dict | None = None, accepted_min_clock_mhz: float | None = None) -> dict:
    """metrics.json's `vitis_link` object (metrics.schema.json): the kernel clock the xclbin has (read
    from the xclbin, not from the log), whether the link log says v++ scaled it, and from what."""
    scaled = bool(link_log and link_log.get("scaled"))
    requested = next((s["from_mhz"] for s in (link_log or {}).get("scaled_clocks", []) if s.get("from_mhz")), None)
    return {"kernel_clock_mhz": kernel_clock_mhz(rec), "requested_clock_mhz": requested, "scaled": scaled,
            "accepted_min_clock_mhz": accepted_min_clock_mhz, "uuid": rec["uuid"],
            "platform_vbnv": rec["platform_vbnv"], "kernels": list(rec["kernels"]),
            "clocks": [dict(c) for c in rec["clocks"]]}
