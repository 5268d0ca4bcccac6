// A valid shared library that is not a speedlab plugin (no registration symbols).
extern "C" int not_a_speedlab_plugin() { return 1; }
