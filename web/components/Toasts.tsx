import { Toaster } from "react-hot-toast";

/**
 * Spec §9 toast constants: blank 4000 ms, error 4000 ms, success 2000 ms, loading unlimited, custom
 * 4000 ms; max width 350 px; gutter 8 px. react-hot-toast itself keeps at most 20 and removes a
 * dismissed toast after 1000 ms, which are the spec's other two numbers.
 */
export function Toasts() {
  return (
    <Toaster
      position="top-right"
      gutter={8}
      // Below the top bar and the chat header, so an error never hides the channel's name, the
      // connection state or LEAVE.
      containerStyle={{ top: 96 }}
      toastOptions={{
        blank: { duration: 4000 },
        error: { duration: 4000 },
        success: { duration: 2000 },
        loading: { duration: Number.POSITIVE_INFINITY },
        custom: { duration: 4000 },
        style: {
          maxWidth: 350,
          background: "#031",
          color: "#c8ffe8",
          border: "1px solid #00ff9c",
          fontFamily: "inherit",
        },
      }}
    />
  );
}
