// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors
//
// Compiled once for hack/catalog's bytecode test (Thrower.class, checked in):
//   javac --release 17 -d . Thrower.java && mv lab/Thrower.class . && rmdir lab
package lab;

public class Thrower {
    void concat(int n) {
        throw new IllegalStateException("Configured voter set: " + n + " is different from the state file");
    }

    void format(String s) {
        throw new IllegalArgumentException(String.format("Unable to open snapshot %s at offset %d", s, 3));
    }

    RuntimeException handedOn(Exception cause) {
        return new RuntimeException("Handed on with its cause", cause);
    }

    void switched(int k) {
        switch (k) {
            case 1: throw new UnsupportedOperationException("Case one is not supported");
            case 2: throw new UnsupportedOperationException("Case two is not supported");
            case 3: throw new UnsupportedOperationException("Case three is not supported");
            default: break;
        }
    }

    void builder(int n) {
        StringBuilder sb = new StringBuilder();
        throw new IllegalStateException(new StringBuilder("Built ").append(n).append(" by hand").toString());
    }

    void nested() {
        throw new IllegalStateException("Outer message", new IllegalArgumentException("Inner message"));
    }

    void notAnException() {
        Object o = new java.io.File("not an exception message");
    }
}
