// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// KafkabotLockProbe tells whether another process holds a POSIX (fcntl)
// lock on a file, the way a running Kafka holds <log dir>/.lock: it asks for
// a shared lock on a read-only channel without waiting, and releases it at
// once. repair.sh carries this class compiled (javac --release 8, base64 in
// kafka_lock_java) because JRE-only images have no compiler; regenerate it
// with: go test ./internal/recovery -run TestLockProbeClass -update-lockprobe
//
// Exit status: 0 the lock is free, 3 another process holds it, 2 cannot tell.
//
// Loaded, it removes its own class file, and then the directory it was
// loaded from if that is empty (the script itself never deletes anything):
// only that file name, in the directory of its own code source.
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

public final class KafkabotLockProbe {
    public static void main(String[] args) {
        removeSelf();
        if (args.length != 1) {
            System.err.println("usage: KafkabotLockProbe <lock file>");
            System.exit(2);
        }
        int status;
        try (FileChannel ch = FileChannel.open(Paths.get(args[0]), StandardOpenOption.READ)) {
            FileLock lock = ch.tryLock(0L, Long.MAX_VALUE, true);
            if (lock == null) {
                status = 3;
            } else {
                lock.release();
                status = 0;
            }
        } catch (Throwable e) {
            System.err.println(e);
            status = 2;
        }
        System.exit(status);
    }

    /** Removes this class's file and, when then empty, its directory. */
    private static void removeSelf() {
        try {
            Path dir = Paths.get(KafkabotLockProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Files.deleteIfExists(dir.resolve("KafkabotLockProbe.class"));
            Files.deleteIfExists(dir);
        } catch (Throwable e) {
            System.err.println("could not remove the probe's class: " + e);
        }
    }
}
