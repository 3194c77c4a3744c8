export function ChatScreen({ workspaceId, threadId }: { workspaceId: string; threadId: string | null }) {
  return (
    <section class="page">
      <p>
        Chat {workspaceId} {threadId}
      </p>
    </section>
  );
}
