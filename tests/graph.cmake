# tests of the graph readers and generators
