// kabe's streaming test bench: one C++ harness for every design (docs/streams.md port contract).
//
// Built by kabe/sim/verilator_build.py with a generated kabe_design.h that defines
//   KABE_NPORTS, KABE_DESIGN (a string), KABE_TOP_CLASS, KABE_TOP_HEADER.
//
// Per port p: streams the raw bytes of an input file as 8-byte little-endian beats into
// s{p}_axis (tvalid held high every cycle, tlast on the final beat), holds m{p}_axis_tready = 1,
// and captures every m{p}_axis word (zero-extended to uint64) with its tlast. Stops once every
// port has sent all of its beats and produced its expected word count, plus a short drain to
// catch extra words; a cycle limit turns a hung design into an error instead of a hang.
//
// Usage:
//   harness --summary S.json --max-cycles N [--reset-cycles R] [--drain D] [--usr-access WORD]
//           --port IN.bin EXPECTED_WORDS OUT.bin   (once per port, in port order)
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

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

// A top-level port of width <= 64 bits, whatever C type Verilator chose for it.
struct Sig {
    void* p = nullptr;
    unsigned bytes = 0;
    template <class T>
    static Sig of(T* x) {
        static_assert(sizeof(T) <= 8, "ports wider than 64 bits are not part of the stream contract");
        Sig s;
        s.p = x;
        s.bytes = sizeof(T);
        return s;
    }
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
};

struct Port {
    Sig s_tdata, s_tvalid, s_tready, s_tlast;
    Sig m_tdata, m_tvalid, m_tready, m_tlast;
    Sig stat_invalid, stat_overflow;

    std::string in_path, out_path;
    const uint64_t* beats = nullptr;  // mmap'ed input (little-endian beats == host order on x86/ARM LE)
    size_t nbeats = 0;
    size_t map_bytes = 0;
    uint64_t expected_words = 0;

    size_t pos = 0;  // next beat to offer
    int64_t first_accept = -1, last_accept = -1;
    int64_t first_out = -1, last_out = -1;
    uint64_t tready_low = 0;  // cycles with tvalid high and tready low
    std::vector<uint64_t> words;
    std::vector<uint64_t> tlast_at;  // word indices carrying tlast
};

// KABE_BIND(top, ports, p): connect port p's signals (token pasting builds the member names).
#define KABE_BIND(top, ports, i)                                          \
    do {                                                                  \
        Port& q = (ports)[i];                                             \
        q.s_tdata = Sig::of(&(top)->s##i##_axis_tdata);                   \
        q.s_tvalid = Sig::of(&(top)->s##i##_axis_tvalid);                 \
        q.s_tready = Sig::of(&(top)->s##i##_axis_tready);                 \
        q.s_tlast = Sig::of(&(top)->s##i##_axis_tlast);                   \
        q.m_tdata = Sig::of(&(top)->m##i##_axis_tdata);                   \
        q.m_tvalid = Sig::of(&(top)->m##i##_axis_tvalid);                 \
        q.m_tready = Sig::of(&(top)->m##i##_axis_tready);                 \
        q.m_tlast = Sig::of(&(top)->m##i##_axis_tlast);                   \
        q.stat_invalid = Sig::of(&(top)->stat##i##_invalid);              \
        q.stat_overflow = Sig::of(&(top)->stat##i##_overflow);            \
    } while (0)

void bind_ports(KABE_TOP_CLASS* top, Port* ports) {
    KABE_BIND(top, ports, 0);
#if KABE_NPORTS > 1
    KABE_BIND(top, ports, 1);
#endif
#if KABE_NPORTS > 2
#error "the harness binds at most 2 ports (the PYNQ-Z1 designs use 1 or 2 HP ports)"
#endif
}

[[noreturn]] void die(const char* fmt, const char* arg) {
    std::fprintf(stderr, "harness: ");
    std::fprintf(stderr, fmt, arg);
    std::fprintf(stderr, "\n");
    std::exit(2);
}

void map_input(Port& p) {
    int fd = ::open(p.in_path.c_str(), O_RDONLY);
    if (fd < 0) die("cannot open input %s", p.in_path.c_str());
    struct stat st {};
    if (::fstat(fd, &st) != 0) die("cannot stat %s", p.in_path.c_str());
    if (st.st_size % 8) die("input %s is not whole 8-byte beats", p.in_path.c_str());
    p.nbeats = static_cast<size_t>(st.st_size) / 8;
    p.map_bytes = static_cast<size_t>(st.st_size);
    if (p.map_bytes) {
        void* m = ::mmap(nullptr, p.map_bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED) die("cannot mmap %s", p.in_path.c_str());
        ::madvise(m, p.map_bytes, MADV_SEQUENTIAL);
        p.beats = static_cast<const uint64_t*>(m);
    }
    ::close(fd);
}

void write_words(const Port& p) {
    FILE* f = std::fopen(p.out_path.c_str(), "wb");
    if (!f) die("cannot write %s", p.out_path.c_str());
    if (!p.words.empty() && std::fwrite(p.words.data(), 8, p.words.size(), f) != p.words.size())
        die("short write to %s", p.out_path.c_str());
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

}  // namespace

int main(int argc, char** argv) {
    std::string summary_path;
    uint64_t max_cycles = 0, reset_cycles = 4, drain = 32;
    long long usr_access = -1;  // -1: not given
    std::vector<Port> ports;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
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
        else if (a == "--port") {
            need(3);
            Port p;
            p.in_path = argv[++i];
            p.expected_words = std::strtoull(argv[++i], nullptr, 10);
            p.out_path = argv[++i];
            ports.push_back(std::move(p));
        } else die("unknown argument %s", a.c_str());
    }
    if (summary_path.empty() || max_cycles == 0) die("%s", "need --summary and --max-cycles");
    if (ports.size() != KABE_NPORTS)
        die("this design has " "%s" " port(s); pass one --port per port", std::to_string(KABE_NPORTS).c_str());

    for (auto& p : ports) {
        map_input(p);
        p.words.reserve(p.expected_words + 16);
    }

    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(1, argv);
    auto top = std::make_unique<KABE_TOP_CLASS>(ctx.get());
    bind_ports(top.get(), ports.data());

    // Reset: rst high with nothing offered, m_tready high throughout.
    top->clk = 0;
    top->rst = 1;
    for (auto& p : ports) {
        p.s_tvalid.set(0);
        p.s_tlast.set(0);
        p.s_tdata.set(0);
        p.m_tready.set(1);
    }
    top->eval();
    for (uint64_t c = 0; c < reset_cycles; ++c) {
        top->clk = 1; top->eval();
        top->clk = 0; top->eval();
    }
    top->rst = 0;
    top->eval();

    const auto t0 = std::chrono::steady_clock::now();
    int64_t cycle = 0;  // counts rising edges after reset
    int64_t done_at = -1;
    bool timeout = false;
    const int nports = static_cast<int>(ports.size());
    for (;;) {
        // Low phase: present this cycle's inputs and let combinational outputs settle.
        for (int i = 0; i < nports; ++i) {
            Port& p = ports[i];
            if (p.pos < p.nbeats) {
                p.s_tdata.set(p.beats[p.pos]);
                p.s_tvalid.set(1);
                p.s_tlast.set(p.pos + 1 == p.nbeats);
            } else {
                p.s_tvalid.set(0);
                p.s_tlast.set(0);
            }
        }
        top->clk = 0;
        top->eval();
        // What the rising edge will transfer (valid && ready sampled before the edge).
        for (int i = 0; i < nports; ++i) {
            Port& p = ports[i];
            if (p.pos < p.nbeats) {
                if (p.s_tready.get()) {
                    if (p.first_accept < 0) p.first_accept = cycle;
                    p.last_accept = cycle;
                    ++p.pos;
                } else {
                    ++p.tready_low;
                }
            }
            if (p.m_tvalid.get()) {  // m_tready is held at 1
                if (p.m_tlast.get()) p.tlast_at.push_back(p.words.size());
                p.words.push_back(p.m_tdata.get());
                if (p.first_out < 0) p.first_out = cycle;
                p.last_out = cycle;
            }
        }
        top->clk = 1;
        top->eval();
        ++cycle;

        if (done_at < 0) {
            bool done = true;
            for (int i = 0; i < nports; ++i)
                done = done && ports[i].pos == ports[i].nbeats && ports[i].words.size() >= ports[i].expected_words;
            if (done) done_at = cycle;
        }
        if (done_at >= 0 && static_cast<uint64_t>(cycle - done_at) >= drain) break;
        if (static_cast<uint64_t>(cycle) >= max_cycles) {
            timeout = true;
            break;
        }
    }
    const double sim_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    top->final();

    FILE* s = std::fopen(summary_path.c_str(), "w");
    if (!s) die("cannot write %s", summary_path.c_str());
    std::fprintf(s, "{\n  \"design\": \"%s\",\n  \"nports\": %d,\n  \"total_cycles\": %lld,\n", KABE_DESIGN, nports,
                 static_cast<long long>(cycle));
    if (usr_access < 0) std::fprintf(s, "  \"usr_access\": null,\n");
    else std::fprintf(s, "  \"usr_access\": %lld,\n", usr_access);
    std::fprintf(s, "  \"timeout\": %s,\n  \"max_cycles\": %llu,\n  \"sim_seconds\": %.6f,\n  \"ports\": [\n",
                 timeout ? "true" : "false", static_cast<unsigned long long>(max_cycles), sim_seconds);
    for (int i = 0; i < nports; ++i) {
        Port& p = ports[i];
        write_words(p);
        const long long cycles = p.first_accept < 0 ? 0 : p.last_accept - p.first_accept + 1;
        std::fprintf(s, "    {\"port\": %d, \"input\": \"%s\", \"output\": \"%s\", ", i, json_escape(p.in_path).c_str(),
                     json_escape(p.out_path).c_str());
        std::fprintf(s, "\"beats_in\": %zu, \"beats_accepted\": %zu, \"cycles\": %lld, \"tready_low_cycles\": %llu, ",
                     p.nbeats, p.pos, cycles, static_cast<unsigned long long>(p.tready_low));
        std::fprintf(s, "\"first_accept_cycle\": %lld, \"last_accept_cycle\": %lld, ",
                     static_cast<long long>(p.first_accept), static_cast<long long>(p.last_accept));
        std::fprintf(s, "\"first_out_cycle\": %lld, \"last_out_cycle\": %lld, ", static_cast<long long>(p.first_out),
                     static_cast<long long>(p.last_out));
        std::fprintf(s, "\"words\": %zu, \"expected_words\": %llu, \"m_tdata_bits\": %u, ", p.words.size(),
                     static_cast<unsigned long long>(p.expected_words), p.m_tdata.bytes * 8);
        std::fprintf(s, "\"stat_invalid\": %llu, \"stat_overflow\": %llu, \"tlast_at\": [",
                     static_cast<unsigned long long>(p.stat_invalid.get()),
                     static_cast<unsigned long long>(p.stat_overflow.get()));
        for (size_t k = 0; k < p.tlast_at.size(); ++k)
            std::fprintf(s, "%s%llu", k ? ", " : "", static_cast<unsigned long long>(p.tlast_at[k]));
        std::fprintf(s, "]}%s\n", i + 1 < nports ? "," : "");
        if (p.beats) ::munmap(const_cast<uint64_t*>(p.beats), p.map_bytes);
    }
    std::fprintf(s, "  ]\n}\n");
    std::fclose(s);
    return timeout ? 3 : 0;
}
