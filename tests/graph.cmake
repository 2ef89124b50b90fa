# tests of the graph readers and generators (io/graph_*.c, gen/graph_gen.c)
krill_test(test_graph_read test_graph_read.c LABELS unit)
krill_test(test_graph_testdata test_graph_read.c LABELS data ARGS --testdata)
krill_test(test_graph_gen test_graph_gen.c LABELS unit)
