library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
library acme_lib;
use acme_lib.blink_pkg.all;

entity blink is
  generic (WIDTH : positive := 24);
  port (clk : in std_logic; rst : in std_logic; q : out std_logic);
end entity;

architecture rtl of blink is
  signal count : unsigned(WIDTH - 1 downto 0) := (others => '0');
begin
  process (clk) begin
    if rising_edge(clk) then
      if rst = '1' then count <= (others => '0'); else count <= count + 1; end if;
    end if;
  end process;
  q <= count(WIDTH - 1) when LED_ON = '1' else not count(WIDTH - 1);
end architecture;
