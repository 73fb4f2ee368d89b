// The commit word of the configured bitstream, as a 32-bit output the block design reads over an
// AXI GPIO (ip/kabe_bd.tcl: cell usr_access_src -> GPIO usr_access, channel 1).
//
// USR_ACCESSE2 is the 7-series primitive whose DATA is the bitstream's USR_ACCESS register, which
// scripts/vivado/embed_commit.tcl sets at write_bitstream (BITSTREAM.CONFIG.USR_ACCESS: bits 27..0
// the commit's first 7 hex digits, bit 31 dirty). The word is stamped at bitstream time only, so it
// never changes synthesis. The board runner reads it after programming and refuses to verify a PL
// that runs another commit than the archive it was given (kabe/deploy/board_runner.py).
//
// Vivado only (a module reference in the block design); the open flow and the simulations never
// see this file.
module kabe_usr_access (
    output wire [31:0] usr_access
);
    USR_ACCESSE2 usr_access_inst (
        .CFGCLK(),
        .DATA(usr_access),
        .DATAVALID()
    );
endmodule
