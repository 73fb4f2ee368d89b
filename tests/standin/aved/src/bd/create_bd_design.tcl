# STAND-IN for AVED's src/bd/create_bd_design.tcl (kabe tests only; not AMD's). The cells kabe's
# v80_aved_bd.tcl extends, under AVED's names, with the AVED properties it reads.
proc create_root_design {parentCell} {
  set cips [create_bd_cell -type ip -vlnv xilinx.com:ip:versal_cips cips]
  set noc [create_bd_cell -type ip -vlnv xilinx.com:ip:axi_noc axi_noc_cips]
  set_property -dict [list CONFIG.HBM_NUM_CHNL {16} CONFIG.HBM_REF_CLK_FREQ0 {200.000} CONFIG.NUM_CLKS {5} \
                           CONFIG.NUM_HBM_BLI {0} CONFIG.NUM_MI {1} CONFIG.NUM_NMI {4} CONFIG.NUM_NSI {0} \
                           CONFIG.NUM_SI {4}] $noc
  set_property -dict [list CONFIG.CONNECTIONS {M00_AXI {read_bw {5} write_bw {5} read_avg_burst {64} write_avg_burst {64}} HBM0_PORT0 {read_bw {250} write_bw {250} read_avg_burst {4} write_avg_burst {4}}} \
                           CONFIG.DEST_IDS {M00_AXI:0x40} CONFIG.CATEGORY {ps_pcie}] [get_bd_intf_pins /axi_noc_cips/S00_AXI]
  create_bd_cell -type hier clock_reset
  set wiz [create_bd_cell -type ip -vlnv xilinx.com:ip:clk_wizard clock_reset/usr_clk_wiz]
  set_property -dict [list CONFIG.CLKOUT_REQUESTED_OUT_FREQUENCY {300,500} CONFIG.CLKOUT_USED {true,true}] $wiz
  create_bd_cell -type ip -vlnv xilinx.com:ip:proc_sys_reset clock_reset/usr_0_psr
  create_bd_cell -type hier base_logic
  create_bd_cell -type ip -vlnv xilinx.com:ip:shell_utils_uuid_rom base_logic/uuid_rom
  connect_bd_net [get_bd_pins cips/pl1_ref_clk] [get_bd_pins clock_reset/clk_freerun]
}
