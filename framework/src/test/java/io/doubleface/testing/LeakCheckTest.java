package io.doubleface.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@link LeakCheck#isMongoDriverWriteRace} forgives exactly the MongoDB driver's write/close race
 * and nothing near it. The fixture is a report the detector printed in a CI run.
 */
class LeakCheckTest {

    static String report() throws IOException {
        try (InputStream in = LeakCheckTest.class.getResourceAsStream("mongo-driver-write-race.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void theDriversCompositeThatNeverReachedAChannelIsForgiven() throws IOException {
        assertTrue(LeakCheck.isMongoDriverWriteRace(report()));
    }

    @Test
    void aBufferCreatedAnywhereElseIsNot() throws IOException {
        String created = report().replace(
                "\tcom.mongodb.internal.connection.netty.NettyStream.writeAsync(NettyStream.java:245)",
                "\tio.doubleface.redis.PipelinedConnection.send(PipelinedConnection.java:10)");
        assertFalse(LeakCheck.isMongoDriverWriteRace(created));
    }

    @Test
    void aCompositeThatWasWrittenOrTouchedElsewhereIsNot() throws IOException {
        String r = report();
        String hinted = r.replace("#1:", "#1:\n\tHint: 'DefaultChannelPipeline$HeadContext#0' will handle the message from this point.\n"
                + "\tio.netty.channel.DefaultChannelPipeline.touch(DefaultChannelPipeline.java:116)\n#2:");
        assertFalse(LeakCheck.isMongoDriverWriteRace(hinted));
        String otherAccess = r.replace("#1:", "#1:\n\tio.netty.buffer.AdvancedLeakAwareCompositeByteBuf.readBytes(X.java:1)\n"
                + "\tio.doubleface.mongo.MongoLoopClient.send(MongoLoopClient.java:1)\n#2:");
        assertFalse(LeakCheck.isMongoDriverWriteRace(otherAccess));
    }

    @Test
    void aReportWithDroppedRecordsOrNoAccessIsNot() throws IOException {
        String r = report();
        assertFalse(LeakCheck.isMongoDriverWriteRace(r + ": 3 leak records were discarded because the leak record count"
                + " is targeted to 4. Use system property io.netty.leakDetection.targetRecords to increase the limit.\n"));
        String noAccess = "\nRecent access records: \n" + r.substring(r.indexOf("Created at:"));
        assertFalse(LeakCheck.isMongoDriverWriteRace(noAccess));
    }
}
