# tests of apsp/
