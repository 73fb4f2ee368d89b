// kabe's streaming test bench: one C++ harness for every design verified by a golden model
// (docs/your_design.md; kabe's own designs: docs/streams.md).
//
// Built by kabe/sim/verilator_build.py with two generated files: kabe_design.h (KABE_DESIGN, a
// string; KABE_TOP_CLASS, KABE_TOP_HEADER) and kabe_bind.inc, which binds design.yaml's `streams:`
// by name: each input stream's <name>_tdata/_tvalid/_tready/_tlast, each output stream's, and
// each status output. tdata may be 8 to 512 bits: ports over 64 bits are Verilator's VlWide<N>
// (N 32-bit words), read and written through their word array.
//
// Per input stream: streams the words of its file (ceil(bits/64) little-endian uint64 words per
// beat), tlast on the final beat; a beat, once offered (tvalid high), is held until tready takes it
// (AXI-Stream's rule). Per output stream: every beat captured (same word layout) with its tlast.
// Traffic (--valid-duty, --ready-duty, --traffic-seed): an input with a beat left offers it on a
// cycle with probability valid-duty (gaps), an output's tready is high on a cycle with probability
// ready-duty (backpressure), both from one seeded generator; at 1 (the default) tvalid is high
// whenever a beat is left and tready always high, as real traffic never is but a throughput
// measurement wants. Stops once every input has sent all of its beats and every output produced
// its expected beat count, plus a short drain to catch extra beats; a cycle limit turns a hung design
// into an error instead of a hang. Status outputs are read after the last cycle and watched on every
// cycle (the highest value seen, the first cycle it was not 0): a one-cycle overflow pulse is seen.
// Sideband ports (kabe_bind.inc's `sides`: <stream>_tkeep/_tstrb/_tuser/_tid/_tdest, 64 bits at most):
// `--side-in PORT FILE` drives an input stream's one from FILE (one uint64 per beat, with the beat),
// `--side-out PORT FILE` captures an output stream's one with every beat into FILE.
// Top inputs in no stream (kabe_bind.inc's `held`) are set once, before the first evaluation, to
// 0 or design.yaml's streams.hold value: never Verilator's random initial value.
// Clocks and resets (kabe_bind.inc's `clocks`, `resets`): the top's clock ports (the XDC's create_clock
// ports, else clk), each toggled every half of its period (in ps; one clock: the period does not matter),
// and its reset ports, held at their active level (1, or 0 for an active-low one) for --reset-cycles edges
// of the slowest clock. Each stream belongs to one clock: its inputs change at that clock's falling edge
// and a beat is transferred at its rising edge (valid and ready as they stood before it); its counters
// count that clock's cycles. The first clock is the run's: the cycle limit, the drain and total_cycles are
// its cycles, and status outputs are watched at its edges. Clocks rising at one instant rise together,
// before any input changes at that instant.
//
// Usage:
//   harness --summary S.json --max-cycles N [--reset-cycles R] [--drain D] [--usr-access WORD]
//           [--valid-duty D] [--ready-duty D] [--traffic-seed S]
//           [--side-in PORT FILE ...] [--side-out PORT FILE ...]
//           --in IN.bin ...                   (once per input stream, in design.yaml's order)
//           --in-stream FIFO BEATS ...        (instead of --in: BEATS beats read as the run needs them,
//                                              from a FIFO kabe writes while the simulation runs)
//           --out OUT.bin EXPECTED_BEATS ...  (once per output stream, in design.yaml's order)
//   --port IN.bin EXPECTED OUT.bin is `--in IN.bin --out OUT.bin EXPECTED` (kabe's paired HP ports).
// --usr-access: the simulated PL's USR_ACCESS register (on the board: USR_ACCESSE2, the configured
// bitstream's commit word, read over a GPIO); reported back in the summary as "usr_access" (null
// when not given). The deploy tests' simulated board sets it from the .bit it "programs".
// Exit status: 0 done, 2 bad arguments / IO error, 3 cycle limit reached (summary still written).

#include "kabe_design.h"  // first: it names the top header
#include KABE_TOP_HEADER
#include "verilated.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

// A top-level port, whatever C type Verilator chose for it: CData..QData up to 64 bits, VlWide<N>
// (N 32-bit words, least significant first) above.
struct Sig {
    void* p = nullptr;
    unsigned bytes = 0;  // of the C type (4 x N for VlWide<N>)
    bool wide = false;
    template <class T>
    static Sig of(T* x) {
        static_assert(sizeof(T) <= 8, "a port over 64 bits is a VlWide");
        Sig s;
        s.p = x;
        s.bytes = sizeof(T);
        return s;
    }
    template <std::size_t N>
    static Sig of(VlWide<N>* x) {
        Sig s;
        s.p = x->data();
        s.bytes = 4 * N;
        s.wide = true;
        return s;
    }
    unsigned words() const { return wide ? (bytes + 7) / 8 : 1; }  // uint64 words per beat in the files
    inline uint64_t get() const {
        switch (bytes) {
            case 1: return *static_cast<uint8_t*>(p);
            case 2: return *static_cast<uint16_t*>(p);
            case 4: return *static_cast<uint32_t*>(p);
            default: return *static_cast<uint64_t*>(p);
        }
    }
    inline void set(uint64_t v) const {
        switch (bytes) {
            case 1: *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v); break;
            case 2: *static_cast<uint16_t*>(p) = static_cast<uint16_t>(v); break;
            case 4: *static_cast<uint32_t*>(p) = static_cast<uint32_t>(v); break;
            default: *static_cast<uint64_t*>(p) = v; break;
        }
    }
    // A wide port from/to little-endian uint64 words (x86 and ARM are little endian: the EData
    // words of a VlWide are the same bytes in the same order).
    inline void set_words(const uint64_t* w) const { std::memcpy(p, w, bytes); }
    inline void get_words(uint64_t* w) const {
        w[words() - 1] = 0;
        std::memcpy(w, p, bytes);
    }
};

struct In {
    const char* name = "";
    int clock = 0;  // index into clocks
    Sig tdata, tvalid, tready, tlast;
    std::string path;
    const uint64_t* beats = nullptr;  // mmap'ed input, words() uint64 per beat (a stream: its buffer)
    size_t nbeats = 0;
    size_t map_bytes = 0;
    size_t pos = 0;  // next beat to offer
    // A stream (--in-stream: a FIFO kabe writes while the run goes on): beats base .. base + have of it
    // are in buf; the next ones are read when the run needs them, so the run never waits for the whole input.
    int fd = -1;
    size_t base = 0, have = 0;
    std::vector<uint64_t> buf;
    double wait_seconds = 0;  // in read(): waiting for kabe's writer (the simulation starved of input)
    int64_t first_accept = -1, last_accept = -1;
    uint64_t tready_low = 0;  // cycles with tvalid high and tready low
    bool offered = false;  // tvalid is high with beat pos: held until taken
    uint64_t gap_cycles = 0;  // cycles with a beat left and tvalid low (traffic)
};

struct Out {
    const char* name = "";
    int clock = 0;
    Sig tdata, tvalid, tready, tlast;
    std::string path;
    uint64_t expected = 0;  // beats
    int64_t first_out = -1, last_out = -1;
    std::vector<uint64_t> words;
    size_t nbeats = 0;
    std::vector<uint64_t> tlast_at;  // beat indices carrying tlast
    uint64_t stall_cycles = 0;  // cycles with tvalid high and tready low (backpressure)
};

struct Status {
    const char* name = "";
    Sig sig;
    uint64_t max_seen = 0;
    int64_t first_nonzero = -1;
};

// A top input in no stream: held at one value for the whole run (64 bits at most; a wider port's
// other words are 0).
struct Held {
    const char* name = "";
    Sig sig;
    uint64_t value = 0;
};

// A sideband signal of a stream (tkeep, tuser, ...): driven from a file with each beat of an input stream,
// captured with each beat of an output stream; bound, and only used when a --side-in/--side-out names it.
struct Side {
    const char* name = "";
    int stream = 0;  // index into ins or outs
    bool input = true;
    Sig sig;
    std::string path;  // empty: not used this run
    const uint64_t* values = nullptr;
    size_t nvalues = 0, map_bytes = 0;
    std::vector<uint64_t> got;
};

// A clock port: low, then high for half_ps, low for half_ps, ...; cycles counts its rising edges after reset.
struct Clock {
    const char* name = "";
    Sig sig;
    uint64_t half_ps = 1;
    uint64_t next_ps = 0;  // its next edge
    bool high = false;
    int64_t cycles = 0;
};

// A reset port: `active` (1, or 0 when active low) during reset, the other value after it.
struct Reset {
    const char* name = "";
    Sig sig;
    uint64_t active = 1;
};

// splitmix64: the traffic's one generator, seeded by --traffic-seed (a rerun reproduces it)
struct Rng {
    uint64_t s;
    inline uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // true with probability threshold / 2^32
    inline bool chance(uint64_t threshold) { return (next() >> 32) < threshold; }
};

// The generated kabe_bind.inc: one line per signal, e.g.
//   ins[0].name = "s0_axis"; ins[0].tdata = Sig::of(&top->s0_axis_tdata); ...
void bind_ports(KABE_TOP_CLASS* top, std::vector<In>& ins, std::vector<Out>& outs, std::vector<Status>& status,
                std::vector<Held>& held, std::vector<Side>& sides, std::vector<Clock>& clocks,
                std::vector<Reset>& resets) {
#include "kabe_bind.inc"
}

[[noreturn]] void die(const char* fmt, const char* arg) {
    std::fprintf(stderr, "harness: ");
    std::fprintf(stderr, fmt, arg);
    std::fprintf(stderr, "\n");
    std::exit(2);
}

void map_input(In& p) {
    int fd = ::open(p.path.c_str(), O_RDONLY);
    if (fd < 0) die("cannot open input %s", p.path.c_str());
    struct stat st {};
    if (::fstat(fd, &st) != 0) die("cannot stat %s", p.path.c_str());
    const size_t beat_bytes = 8 * p.tdata.words();
    if (static_cast<size_t>(st.st_size) % beat_bytes) die("input %s is not whole beats", p.path.c_str());
    p.nbeats = static_cast<size_t>(st.st_size) / beat_bytes;
    p.map_bytes = static_cast<size_t>(st.st_size);
    if (p.map_bytes) {
        void* m = ::mmap(nullptr, p.map_bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED) die("cannot mmap %s", p.path.c_str());
        ::madvise(m, p.map_bytes, MADV_SEQUENTIAL);
        p.beats = static_cast<const uint64_t*>(m);
    }
    ::close(fd);
}

// A stream's input: open it (a FIFO blocks until kabe's writer opens it), nbeats as the command line said.
void open_stream(In& p, size_t beats) {
    p.fd = ::open(p.path.c_str(), O_RDONLY);
    if (p.fd < 0) die("cannot open input stream %s", p.path.c_str());
    p.nbeats = beats;
    p.buf.resize(size_t{1} << 16);  // 512 KiB: a few hundred microseconds of simulation per read
    p.beats = p.buf.data();
}

// The stream's beats from pos on into buf (whole beats; blocks until kabe's writer has written them).
// A stream that ends before its beat count is an error: the writer failed (kabe says why).
void refill(In& p) {
    const size_t w = p.tdata.words();
    p.base = p.pos;
    const size_t want = std::min(p.buf.size() / w, p.nbeats - p.pos) * w * 8;
    auto* dst = reinterpret_cast<char*>(p.buf.data());
    size_t got = 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (got < want) {
        const ssize_t n = ::read(p.fd, dst + got, want - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            die("input stream %s", (p.path + " ended after " + std::to_string(p.base + got / (8 * w)) + " of its " +
                                    std::to_string(p.nbeats) + " beats (" +
                                    (n < 0 ? std::strerror(errno) : "its writer closed it") + ")").c_str());
        got += static_cast<size_t>(n);
    }
    p.have = want / (8 * w);
    p.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Beat pos of input p (a stream's next beats read when pos leaves the buffer).
inline const uint64_t* beat_at(In& p) {
    if (p.fd >= 0 && p.pos - p.base >= p.have) refill(p);
    return p.beats + (p.pos - p.base) * p.tdata.words();
}

void write_words(const Out& p) {
    FILE* f = std::fopen(p.path.c_str(), "wb");
    if (!f) die("cannot write %s", p.path.c_str());
    if (!p.words.empty() && std::fwrite(p.words.data(), 8, p.words.size(), f) != p.words.size())
        die("short write to %s", p.path.c_str());
    std::fclose(f);
}

std::string json_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o;
}

uint64_t status_value(const std::vector<Status>& status, const std::string& name) {
    for (const auto& st : status)
        if (name == st.name) return st.sig.get();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string summary_path;
    uint64_t max_cycles = 0, reset_cycles = 4, drain = 32;
    long long usr_access = -1;  // -1: not given
    double valid_duty = 1.0, ready_duty = 1.0;
    uint64_t traffic_seed = 1;
    std::vector<std::string> in_paths;
    std::vector<long long> in_beats;  // -1: a file (its size says); else a stream of this many beats
    std::vector<std::pair<std::string, uint64_t>> out_args;
    std::vector<std::pair<std::string, std::string>> side_args;  // port, file
    std::vector<const char*> plusargs{argv[0]};  // +verilator+... (X values: rand reset, seed) for Verilator
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (!a.empty() && a[0] == '+') { plusargs.push_back(argv[i]); continue; }
        auto need = [&](int n) {
            if (i + n >= argc) die("missing value after %s", a.c_str());
        };
        if (a == "--summary") { need(1); summary_path = argv[++i]; }
        else if (a == "--max-cycles") { need(1); max_cycles = std::strtoull(argv[++i], nullptr, 10); }
        else if (a == "--reset-cycles") { need(1); reset_cycles = std::strtoull(argv[++i], nullptr, 10); }
        else if (a == "--drain") { need(1); drain = std::strtoull(argv[++i], nullptr, 10); }
        else if (a == "--usr-access") {
            need(1);
            char* end = nullptr;
            const unsigned long long v = std::strtoull(argv[++i], &end, 0);
            if (!end || *end || v > 0xFFFFFFFFull) die("--usr-access %s is not a 32-bit word", argv[i]);
            usr_access = static_cast<long long>(v);
        }
        else if (a == "--valid-duty") { need(1); valid_duty = std::strtod(argv[++i], nullptr); }
        else if (a == "--ready-duty") { need(1); ready_duty = std::strtod(argv[++i], nullptr); }
        else if (a == "--traffic-seed") { need(1); traffic_seed = std::strtoull(argv[++i], nullptr, 10); }
        else if (a == "--side-in" || a == "--side-out") {
            need(2);
            std::string port = argv[++i];
            side_args.emplace_back(port, argv[++i]);
        }
        else if (a == "--in") { need(1); in_paths.push_back(argv[++i]); in_beats.push_back(-1); }
        else if (a == "--in-stream") {
            need(2);
            in_paths.push_back(argv[++i]);
            in_beats.push_back(static_cast<long long>(std::strtoull(argv[++i], nullptr, 10)));
        }
        else if (a == "--out") {
            need(2);
            std::string path = argv[++i];
            out_args.emplace_back(path, std::strtoull(argv[++i], nullptr, 10));
        }
        else if (a == "--port") {
            need(3);
            in_paths.push_back(argv[++i]);
            in_beats.push_back(-1);
            const uint64_t expected = std::strtoull(argv[++i], nullptr, 10);
            out_args.emplace_back(argv[++i], expected);
        } else die("unknown argument %s", a.c_str());
    }
    if (summary_path.empty() || max_cycles == 0) die("%s", "need --summary and --max-cycles");
    if (!(valid_duty > 0 && valid_duty <= 1) || !(ready_duty > 0 && ready_duty <= 1))
        die("%s", "--valid-duty and --ready-duty must be above 0 and at most 1");
    const bool gaps = valid_duty < 1, backpressure = ready_duty < 1;
    const uint64_t valid_threshold = static_cast<uint64_t>(valid_duty * 4294967296.0);
    const uint64_t ready_threshold = static_cast<uint64_t>(ready_duty * 4294967296.0);
    Rng rng{traffic_seed};

    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(static_cast<int>(plusargs.size()), plusargs.data());  // before the model: its X values
    auto top = std::make_unique<KABE_TOP_CLASS>(ctx.get());
    std::vector<In> ins;
    std::vector<Out> outs;
    std::vector<Status> status;
    std::vector<Held> held;
    std::vector<Side> sides;
    std::vector<Clock> clocks;
    std::vector<Reset> resets;
    bind_ports(top.get(), ins, outs, status, held, sides, clocks, resets);
    if (clocks.empty()) die("%s", "no clock bound (kabe_bind.inc)");
    for (const auto& [port, path] : side_args) {
        bool bound = false;
        for (auto& sd : sides)
            if (port == sd.name) { sd.path = path; bound = true; }
        if (!bound) die("no sideband port %s on this top", port.c_str());
    }
    // per stream, the sideband signals used this run (none: no cost per beat)
    std::vector<std::vector<Side*>> in_sides(ins.size()), out_sides(outs.size());
    for (auto& sd : sides) {
        if (sd.path.empty()) continue;
        if (sd.input) {
            In tmp;  // map the file with the input mapper: one word per beat
            tmp.tdata = sd.sig;
            tmp.tdata.wide = false;
            tmp.path = sd.path;
            map_input(tmp);
            sd.values = tmp.beats;
            sd.nvalues = tmp.nbeats;
            sd.map_bytes = tmp.map_bytes;
            in_sides[sd.stream].push_back(&sd);
        } else {
            out_sides[sd.stream].push_back(&sd);
        }
    }
    if (in_paths.size() != ins.size())
        die("this design has %s input stream(s); pass one --in per stream", std::to_string(ins.size()).c_str());
    if (out_args.size() != outs.size())
        die("this design has %s output stream(s); pass one --out per stream", std::to_string(outs.size()).c_str());
    for (size_t k = 0; k < ins.size(); ++k) {
        ins[k].path = in_paths[k];
        if (in_beats[k] < 0) map_input(ins[k]);
        else open_stream(ins[k], static_cast<size_t>(in_beats[k]));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
        outs[k].path = out_args[k].first;
        outs[k].expected = out_args[k].second;
        outs[k].words.reserve((outs[k].expected + 16) * outs[k].tdata.words());
    }

    // Reset: every reset at its active level with nothing offered, every tready high, every clock low.
    for (auto& c : clocks) c.sig.set(0);
    for (auto& r : resets) r.sig.set(r.active);
    std::vector<uint64_t> zeros(8, 0);  // 512 bits
    for (auto& h : held) {
        if (h.sig.wide) {
            std::vector<uint64_t> w(h.sig.words(), 0);
            w[0] = h.value;
            h.sig.set_words(w.data());
        } else {
            h.sig.set(h.value);
        }
    }
    for (auto& p : ins) {
        p.tvalid.set(0);
        p.tlast.set(0);
        if (p.tdata.wide) p.tdata.set_words(zeros.data());
        else p.tdata.set(0);
    }
    for (auto& q : outs) q.tready.set(1);
    top->eval();
    {  // reset_cycles rising edges of the slowest clock, every clock running; it ends with every clock low
        uint64_t slow = 0;
        for (auto& c : clocks) slow = c.half_ps > slow ? c.half_ps : slow;
        const uint64_t until = 2 * reset_cycles * slow;
        for (auto& c : clocks) { c.next_ps = c.half_ps; c.high = false; }
        for (;;) {
            uint64_t t = UINT64_MAX;
            for (auto& c : clocks) t = c.next_ps < t ? c.next_ps : t;
            if (t > until) break;
            for (auto& c : clocks)
                if (c.next_ps == t) { c.high = !c.high; c.sig.set(c.high ? 1 : 0); c.next_ps += c.half_ps; }
            top->eval();
        }
        for (auto& c : clocks)
            if (c.high) { c.high = false; c.sig.set(0); }
    }
    for (auto& r : resets) r.sig.set(r.active ? 0 : 1);
    top->eval();

    const auto t0 = std::chrono::steady_clock::now();
    Clock& run_clock = clocks[0];  // the run's clock: its cycles are the limit, the drain and total_cycles
    int64_t done_at = -1;
    bool timeout = false;
    const int nin = static_cast<int>(ins.size()), nout = static_cast<int>(outs.size());
    const int nclk = static_cast<int>(clocks.size());
    uint64_t wide_buf[8];
    // Low phase of clock k: present its streams' inputs for its next rising edge (and their tready).
    auto present = [&](int k) {
        for (int i = 0; i < nin; ++i) {
            In& p = ins[i];
            if (p.clock != k) continue;
            if (p.pos < p.nbeats && !p.offered) p.offered = !gaps || rng.chance(valid_threshold);
            if (p.offered) {
                const uint64_t* b = beat_at(p);
                if (p.tdata.wide) p.tdata.set_words(b);
                else p.tdata.set(*b);
                p.tvalid.set(1);
                p.tlast.set(p.pos + 1 == p.nbeats);
                for (Side* sd : in_sides[i]) sd->sig.set(p.pos < sd->nvalues ? sd->values[p.pos] : 0);
            } else {
                p.tvalid.set(0);
                p.tlast.set(0);
                if (p.pos < p.nbeats) ++p.gap_cycles;
            }
        }
        if (backpressure)
            for (int i = 0; i < nout; ++i)
                if (outs[i].clock == k) outs[i].tready.set(rng.chance(ready_threshold) ? 1 : 0);
    };
    // Before clock k rises: what its edge transfers (valid && ready as they stand).
    auto sample = [&](int k) {
        const int64_t cycle = clocks[k].cycles;
        for (int i = 0; i < nin; ++i) {
            In& p = ins[i];
            if (p.clock != k || !p.offered) continue;
            if (p.tready.get()) {
                if (p.first_accept < 0) p.first_accept = cycle;
                p.last_accept = cycle;
                ++p.pos;
                p.offered = false;
            } else {
                ++p.tready_low;
            }
        }
        for (int i = 0; i < nout; ++i) {
            Out& q = outs[i];
            if (q.clock != k) continue;
            if (q.tvalid.get() && !q.tready.get()) ++q.stall_cycles;
            if (q.tvalid.get() && q.tready.get()) {
                if (q.tlast.get()) q.tlast_at.push_back(q.nbeats);
                if (q.tdata.wide) {
                    q.tdata.get_words(wide_buf);
                    q.words.insert(q.words.end(), wide_buf, wide_buf + q.tdata.words());
                } else {
                    q.words.push_back(q.tdata.get());
                }
                ++q.nbeats;
                for (Side* sd : out_sides[i]) sd->got.push_back(sd->sig.get());
                if (q.first_out < 0) q.first_out = cycle;
                q.last_out = cycle;
            }
        }
        if (k == 0)
            for (auto& st : status) {  // watched every cycle: a pulse between two reads is seen
                const uint64_t v = st.sig.get();
                if (v > st.max_seen) st.max_seen = v;
                if (v && st.first_nonzero < 0) st.first_nonzero = cycle;
            }
    };
    // Every clock is low: each presents its first inputs now and rises half a period later.
    for (int k = 0; k < nclk; ++k) {
        present(k);
        clocks[k].next_ps = clocks[k].half_ps;
        clocks[k].high = false;
    }
    top->eval();
    std::vector<int> rising, falling;
    for (;;) {
        uint64_t t = UINT64_MAX;
        for (auto& c : clocks) t = c.next_ps < t ? c.next_ps : t;
        rising.clear();
        falling.clear();
        for (int k = 0; k < nclk; ++k)
            if (clocks[k].next_ps == t) (clocks[k].high ? falling : rising).push_back(k);
        if (!rising.empty()) {
            for (int k : rising) sample(k);
            for (int k : rising) {
                Clock& c = clocks[k];
                c.sig.set(1);
                c.high = true;
                c.next_ps += c.half_ps;
            }
            top->eval();
            for (int k : rising) ++clocks[k].cycles;
        }
        if (!falling.empty()) {  // after any rise at this instant: an input changes just after the edge
            for (int k : falling) {
                Clock& c = clocks[k];
                present(k);
                c.sig.set(0);
                c.high = false;
                c.next_ps += c.half_ps;
            }
            top->eval();
        }
        if (rising.empty() || rising[0] != 0) continue;  // the checks below count the run's clock
        const int64_t cycle = run_clock.cycles;
        if (done_at < 0) {
            bool done = true;
            for (int i = 0; i < nin; ++i) done = done && ins[i].pos == ins[i].nbeats;
            for (int i = 0; i < nout; ++i) done = done && outs[i].nbeats >= outs[i].expected;
            if (done) done_at = cycle;
        }
        if (done_at >= 0 && static_cast<uint64_t>(cycle - done_at) >= drain) break;
        if (static_cast<uint64_t>(cycle) >= max_cycles) {
            timeout = true;
            break;
        }
    }
    const int64_t cycle = run_clock.cycles;
    const double sim_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    top->final();

    FILE* s = std::fopen(summary_path.c_str(), "w");
    if (!s) die("cannot write %s", summary_path.c_str());
    std::fprintf(s, "{\n  \"design\": \"%s\",\n  \"total_cycles\": %lld,\n", KABE_DESIGN,
                 static_cast<long long>(cycle));
    if (usr_access < 0) std::fprintf(s, "  \"usr_access\": null,\n");
    else std::fprintf(s, "  \"usr_access\": %lld,\n", usr_access);
    std::fprintf(s, "  \"timeout\": %s,\n  \"max_cycles\": %llu,\n  \"sim_seconds\": %.6f,\n  \"inputs\": [\n",
                 timeout ? "true" : "false", static_cast<unsigned long long>(max_cycles), sim_seconds);
    for (int i = 0; i < nin; ++i) {
        In& p = ins[i];
        const long long cycles = p.first_accept < 0 ? 0 : p.last_accept - p.first_accept + 1;
        std::fprintf(s, "    {\"name\": \"%s\", \"input\": \"%s\", \"beats_in\": %zu, \"beats_accepted\": %zu, ",
                     p.name, json_escape(p.path).c_str(), p.nbeats, p.pos);
        std::fprintf(s, "\"cycles\": %lld, \"tready_low_cycles\": %llu, \"gap_cycles\": %llu, \"first_accept_cycle\": %lld, "
                        "\"last_accept_cycle\": %lld, \"stream_wait_seconds\": %.6f}%s\n", cycles, static_cast<unsigned long long>(p.tready_low),
                     static_cast<unsigned long long>(p.gap_cycles),
                     static_cast<long long>(p.first_accept), static_cast<long long>(p.last_accept),
                     p.wait_seconds, i + 1 < nin ? "," : "");
        if (p.fd >= 0) ::close(p.fd);
        else if (p.beats) ::munmap(const_cast<uint64_t*>(p.beats), p.map_bytes);
    }
    std::fprintf(s, "  ],\n  \"outputs\": [\n");
    for (int i = 0; i < nout; ++i) {
        Out& q = outs[i];
        write_words(q);
        std::fprintf(s, "    {\"name\": \"%s\", \"output\": \"%s\", \"beats\": %zu, \"expected_beats\": %llu, ",
                     q.name, json_escape(q.path).c_str(), q.nbeats, static_cast<unsigned long long>(q.expected));
        std::fprintf(s, "\"tdata_bytes\": %u, \"stall_cycles\": %llu, \"first_out_cycle\": %lld, \"last_out_cycle\": %lld, \"tlast_at\": [",
                     q.tdata.bytes, static_cast<unsigned long long>(q.stall_cycles), static_cast<long long>(q.first_out), static_cast<long long>(q.last_out));
        for (size_t k = 0; k < q.tlast_at.size(); ++k)
            std::fprintf(s, "%s%llu", k ? ", " : "", static_cast<unsigned long long>(q.tlast_at[k]));
        std::fprintf(s, "]}%s\n", i + 1 < nout ? "," : "");
    }
    for (auto& sd : sides) {
        if (sd.path.empty()) continue;
        if (sd.input) {
            if (sd.values) ::munmap(const_cast<uint64_t*>(sd.values), sd.map_bytes);
        } else {
            Out tmp;
            tmp.path = sd.path;
            tmp.words = sd.got;
            write_words(tmp);
        }
    }
    std::fprintf(s, "  ],\n  \"status\": {");
    for (size_t k = 0; k < status.size(); ++k)
        std::fprintf(s, "%s\"%s\": %llu", k ? ", " : "", status[k].name,
                     static_cast<unsigned long long>(status[k].sig.get()));
    std::fprintf(s, "},\n  \"status_watch\": {");
    for (size_t k = 0; k < status.size(); ++k)
        std::fprintf(s, "%s\"%s\": {\"max\": %llu, \"first_nonzero_cycle\": %lld}", k ? ", " : "", status[k].name,
                     static_cast<unsigned long long>(status[k].max_seen), static_cast<long long>(status[k].first_nonzero));
    std::fprintf(s, "},\n  \"held\": {");
    for (size_t k = 0; k < held.size(); ++k)
        std::fprintf(s, "%s\"%s\": %llu", k ? ", " : "", held[k].name, static_cast<unsigned long long>(held[k].value));
    // kabe's paired HP ports (the board runner's simulated PL reads these): port p's counters
    std::fprintf(s, "},\n  \"ports\": [");
    for (int i = 0; i < nin && i < nout; ++i) {
        const std::string n = std::to_string(i);
        std::fprintf(s, "%s{\"port\": %d, \"stat_invalid\": %llu, \"stat_overflow\": %llu}", i ? ", " : "", i,
                     static_cast<unsigned long long>(status_value(status, "stat" + n + "_invalid")),
                     static_cast<unsigned long long>(status_value(status, "stat" + n + "_overflow")));
    }
    std::fprintf(s, "]\n}\n");
    std::fclose(s);
    return timeout ? 3 : 0;
}
