from solver.cli import main

main(prog_name="slidepdb")
