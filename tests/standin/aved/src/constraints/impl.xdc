# STAND-IN for AVED's src/constraints/impl.xdc (kabe tests only; not AMD's)
