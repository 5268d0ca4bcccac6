// The library a test plugin needs and the loader will not find (its folder is not searched).
extern "C" __attribute__((visibility("default"))) int speedlab_test_dependency_value() { return 1; }
