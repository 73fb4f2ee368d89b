-- In the VHDL library acme_versal (the core file's logical_name): pulse.vhd reaches it as acme_versal.pulse_pkg.
package pulse_pkg is
  constant PULSE_BITS : positive := 28;
end package;
